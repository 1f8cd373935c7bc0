extension CookieJar {
    /// Stores each item (a Set-Cookie line, a cookie) with `store`, collecting every change for
    /// one commit and, per item in order, nil when stored or why it was refused.
    public mutating func storeEach<Item>(
        _ items: [Item],
        _ store: (inout CookieJar, Item) -> Result<[CookieChange], CookieRejection>
    ) -> (changes: [CookieChange], rejections: [CookieRejection?]) {
        var changes: [CookieChange] = []
        var rejections: [CookieRejection?] = []
        rejections.reserveCapacity(items.count)
        for item in items {
            switch store(&self, item) {
            case .success(let made):
                changes += made
                rejections.append(nil)
            case .failure(let rejection):
                rejections.append(rejection)
            }
        }
        return (changes, rejections)
    }
}
