import Foundation
import Testing
import NotificationsKit

@Suite struct RouteLinksTests {
    static let links = RouteLinks(scheme: "enroute", hosts: ["enroute.example"])

    @Test(arguments: [
        ("enroute://orders/8F3K", Route.order("8F3K")),
        ("ENROUTE://offers/42", Route.offer("42")),
        ("enroute://home", Route.home),
        ("https://enroute.example/orders/8F3K", Route.order("8F3K")),
        ("https://ENROUTE.example/offers/42/", Route.offer("42")),
    ])
    func theAppsOwnLinksOpenTheirScreen(link: String, route: Route) throws {
        #expect(Route(url: try #require(URL(string: link)), links: Self.links) == route)
    }

    /// Any app or page can open a URL in this app: only its scheme and its own hosts are read.
    @Test(arguments: [
        "https://evil.example/orders/8F3K", "http://enroute.example/orders/8F3K", "otherapp://orders/8F3K",
        "https://enroute.example.evil.example/orders/8F3K", "https://user:pw@enroute.example/orders/8F3K",
        "https://enroute.example:8443/orders/8F3K", "enroute://orders/8F3K/extra", "enroute://orders/..%2Fadmin",
        "file:///orders/8F3K", "https://enroute.example/",
    ])
    func anyOtherLinkIsRefused(link: String) throws {
        #expect(Route(url: try #require(URL(string: link)), links: Self.links) == nil)
    }
}

@Suite struct KeychainAccessGroupTests {
    @Test func theGroupComesFromTheInfoPlist() throws {
        let group = try KeychainAccessGroup(infoDictionary: [
            KeychainAccessGroup.infoKey: "ABCDE12345.com.example.shared"
        ])
        #expect(group.rawValue == "ABCDE12345.com.example.shared")
    }

    @Test func aMissingKeyIsAnErrorNotAnEmptyGroup() {
        #expect(throws: KeychainAccessGroup.Invalid.missing) { try KeychainAccessGroup(infoDictionary: [:]) }
        #expect(throws: KeychainAccessGroup.Invalid.missing) {
            try KeychainAccessGroup(infoDictionary: [KeychainAccessGroup.infoKey: 42])
        }
    }

    /// An unexpanded build setting is what a target without the right build settings ships.
    @Test(arguments: [
        "", "ABCDE12345", ".com.example", "ABCDE12345.", "$(AppIdentifierPrefix)com.example.shared",
        "ABCDE12345.com example",
    ])
    func aMalformedGroupIsRefusedWithItsValue(value: String) {
        #expect(throws: KeychainAccessGroup.Invalid.malformed(value)) { try KeychainAccessGroup(value) }
    }
}

@Suite struct AttachmentImageKindTests {
    @Test(arguments: [
        ([0xFF, 0xD8, 0xFF, 0xDB] as [UInt8], AttachmentImageKind.jpeg, "jpg", "public.jpeg"),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], .png, "png", "public.png"),
        (Array("GIF89a..".utf8), .gif, "gif", "com.compuserve.gif"),
        (Array("GIF87a..".utf8), .gif, "gif", "com.compuserve.gif"),
    ])
    func theKindIsToldFromTheFirstBytes(head: [UInt8], kind: AttachmentImageKind, ext: String, uti: String) {
        #expect(AttachmentImageKind(sniffing: Data(head)) == kind)
        #expect(kind.fileExtension == ext && kind.uniformTypeIdentifier == uti)
    }

    @Test(arguments: [[], [0xFF, 0xD8], Array("<html>".utf8), Array("RIFF....WEBP".utf8)] as [[UInt8]])
    func anythingElseIsNoAttachment(head: [UInt8]) { #expect(AttachmentImageKind(sniffing: Data(head)) == nil) }

    @Test func anImageLargerThanTheSystemAttachesIsRefused() {
        var big = Data([0xFF, 0xD8, 0xFF])
        big.append(Data(count: AttachmentImageKind.maximumBytes))
        #expect(AttachmentImageKind(sniffing: big) == nil)
    }

    @Test(arguments: [
        ("https://img.example/rider/12.webp", "12.jpg"), ("https://img.example/rider/12", "12.jpg"),
        ("https://img.example/", "rider.jpg"), ("https://img.example/a/%2E%2E%2Fevil.png", "evil.jpg"),
    ])
    func theFileNameKeepsASafeStemAndTheKindsExtension(url: String, name: String) throws {
        #expect(AttachmentImageKind.jpeg.fileName(for: try #require(URL(string: url))) == name)
    }
}
