extension Unicode.Scalar {
    /// A character that does something to a terminal or a line rather than show: C0, DEL, C1,
    /// and the bidirectional formatting characters (Unicode's Bidi_Control), which reorder
    /// what follows (a file name that reads backwards). Text from servers and files is shown
    /// without them, and a download's file name never has one.
    public var isControlOrBidiFormat: Bool {
        switch value {
        case 0..<0x20, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
