import Testing
import RedisClient

@Suite struct RedisConfigurationTests {
    @Test(arguments: [
        ("redis://127.0.0.1:16379", "127.0.0.1", 16379, 0),
        ("redis://localhost", "localhost", 6379, 0),
        ("redis://cache.internal:7000/3", "cache.internal", 7000, 3),
        ("REDIS://h:1/", "h", 1, 0),
        ("redis://[::1]:6380/2", "::1", 6380, 2),
    ])
    func aRedisURLNamesHostPortAndDatabase(url: String, host: String, port: Int, database: Int) throws {
        let configuration = try RedisConfiguration(url: url)
        #expect(configuration.host == host)
        #expect(configuration.port == port)
        #expect(configuration.database == database)
    }

    @Test(arguments: [
        ("127.0.0.1:6379", "no redis:// scheme"),
        ("http://127.0.0.1:6379", "the scheme is not redis://"),
        ("redis://", "no host"),
        ("redis://:6379", "no host"),
        ("redis://h:port", "the port 'port' is not a number"),
        ("redis://h:70000", "the port '70000' is not a number from 1 to 65535"),
        ("redis://h:1/db", "the database 'db' is not a number"),
        ("redis://user:secret@h:1", "credentials are not supported"),
        ("redis://h:1?timeout=3", "query strings"),
        ("redis://[::1:6379", "closing ]"),
    ])
    func aMalformedURLIsAnErrorThatSaysWhy(url: String, reason: String) {
        #expect {
            _ = try RedisConfiguration(url: url)
        } throws: { error in
            guard case RedisClientError.malformedURL(let named, let why) = error else { return false }
            return named == url && why.contains(reason) && "\(error)".contains("expected redis://host[:port][/db]")
        }
    }

    @Test func theURLIsWrittenBackCanonically() throws {
        #expect(try RedisConfiguration(url: "redis://localhost").url == "redis://localhost:6379")
        #expect(try RedisConfiguration(url: "redis://[::1]:1/4").url == "redis://[::1]:1/4")
    }

    @Test(arguments: [
        ("5-0", RedisStreamID(milliseconds: 5)), ("12-7", RedisStreamID(milliseconds: 12, sequence: 7)),
        ("9", RedisStreamID(milliseconds: 9)),
    ])
    func aStreamIDReadsBothParts(text: String, id: RedisStreamID) {
        #expect(RedisStreamID(text) == id)
        #expect(RedisStreamID(outboxSequence: 5).description == "5-0")
    }

    @Test(arguments: ["", "-", "5-", "a-1", "1-2-3", "-1-0"])
    func aMalformedStreamIDIsNil(text: String) {
        #expect(RedisStreamID(text) == nil)
    }
}
