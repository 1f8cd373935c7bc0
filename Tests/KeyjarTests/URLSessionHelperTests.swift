import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import Testing

struct URLSessionHelperTests {
    @Test func responsesAreStoredLineByLineAndRequestsGetTheirHeader() throws {
        let storage = SharedCookieStorage.ephemeral()
        let url = try #require(URL(string: "https://www.example.com/login"))
        // What Foundation hands over for three Set-Cookie headers, one with an Expires date.
        let joined = "a=1; Expires=Wed, 09 Jun 2027 10:18:14 GMT; Path=/, b=2; Domain=example.com, c=3; Secure"
        let response = try #require(
            HTTPURLResponse(
                url: url,
                statusCode: 200,
                httpVersion: "HTTP/1.1",
                headerFields: ["Set-Cookie": joined]
            )
        )
        #expect(try storage.storeCookies(from: response) == [.stored, .stored, .stored])
        #expect(Set(storage.cookies.map(\.name)) == ["a", "b", "c"])

        var request = URLRequest(url: try #require(URL(string: "https://www.example.com/")))
        storage.addCookies(to: &request)
        #expect(request.value(forHTTPHeaderField: "Cookie") == "a=1; b=2; c=3")
        var optedOut = URLRequest(url: url)
        optedOut.httpShouldHandleCookies = false
        storage.addCookies(to: &optedOut)
        #expect(optedOut.value(forHTTPHeaderField: "Cookie") == nil)
    }

    @Test func splittingKeepsDatesAndValuesWithCommasTogether() {
        #expect(
            SharedCookieStorage.splitSetCookieHeader("x=1; Expires=Thu, 01 Jan 2037 00:00:00 GMT")
                == ["x=1; Expires=Thu, 01 Jan 2037 00:00:00 GMT"]
        )
        #expect(SharedCookieStorage.splitSetCookieHeader("list=a,b,c, next=2") == ["list=a,b,c", "next=2"])
    }
}
