import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteSQLite
import EnRoutePostgres

/// The chat tables on a real database (SQLite, and PostgreSQL when configured), against the in-memory store's
/// behaviour.
@Suite struct ChatStoreTests {
    /// A fresh database and a chat store over it; `reopen` opens another on the same data, as a restart would.
    func makeSUT(
        _ backing: StoreBacking
    ) throws -> (db: TestDatabase, chat: any ChatStore, reopen: () throws -> any ChatStore) {
        let db = try backing.database("chat")
        let open: () throws -> any ChatStore = {
            switch db {
            case .sqlite(let file): try SQLiteChatStore(tripStore: SQLiteTripStore(path: file.path))
            case .postgres(let url, let schema):
                try PostgresChatStore(tripStore: PostgresTripStore(url: url, schema: schema))
            }
        }
        return (db, try open(), open)
    }

    @Test(arguments: StoreBacking.all) func messagesAreSequencedPerTripAndAResendIsStoredOnce(
        _ backing: StoreBacking
    ) async throws {
        let (db, chat, _) = try makeSUT(backing)
        defer { db.remove() }
        let first = try await chat.append(tripId: "T1", messageId: "a", from: .customer, text: "hei", at: Rows.t0)
        let resend = try await chat.append(
            tripId: "T1", messageId: "a", from: .customer, text: "hei", at: Rows.t0.addingTimeInterval(5))
        let other = try await chat.append(tripId: "T1", messageId: "a", from: .provider, text: "moi", at: Rows.t0)
        let elsewhere = try await chat.append(tripId: "T2", messageId: "b", from: .customer, text: "x", at: Rows.t0)
        #expect(first.created && !resend.created && other.created && elsewhere.created)
        #expect(resend.message == first.message, "the stored message, with its first time")
        #expect([first.message.seq, other.message.seq, elsewhere.message.seq] == [1, 2, 1])
        #expect(try await chat.messages(tripId: "T1", after: 0, limit: 10).map(\.text) == ["hei", "moi"])
        #expect(try await chat.messages(tripId: "T1", after: 1, limit: 10).map(\.from) == [.provider])
        #expect(try await chat.message(tripId: "T1", from: .provider, messageId: "a")?.text == "moi")
        #expect(try await chat.message(tripId: "T1", from: .provider, messageId: "zz") == nil)
    }

    @Test(arguments: StoreBacking.all) func anEndedConversationIsRemovedAndTheRemovalSurvivesAReopen(
        _ backing: StoreBacking
    ) async throws {
        let (db, chat, reopen) = try makeSUT(backing)
        defer { db.remove() }
        _ = try await chat.append(tripId: "T1", messageId: "a", from: .customer, text: "hei", at: Rows.t0)
        _ = try await chat.append(tripId: "T2", messageId: "a", from: .customer, text: "hei", at: Rows.t0)
        #expect(try await chat.openConversations() == ["T1", "T2"])
        try await chat.markEnded(tripId: "T1", at: Rows.t0.addingTimeInterval(60))
        try await chat.markEnded(tripId: "T1", at: Rows.t0.addingTimeInterval(999))
        #expect(
            try await chat.conversation(tripId: "T1")?.endedAt == Rows.t0.addingTimeInterval(60),
            "the first end is kept")
        #expect(try await chat.openConversations() == ["T2"])
        #expect(try await chat.conversations(endedBefore: Rows.t0.addingTimeInterval(60)).isEmpty)
        #expect(try await chat.conversations(endedBefore: Rows.t0.addingTimeInterval(61)) == ["T1"])
        try await chat.remove(tripId: "T1", at: Rows.t0.addingTimeInterval(100))

        let reopened = try reopen()
        #expect(try await reopened.messages(tripId: "T1", after: 0, limit: 10).isEmpty)
        #expect(try await reopened.conversation(tripId: "T1")?.removedAt == Rows.t0.addingTimeInterval(100))
        #expect(try await reopened.conversations(endedBefore: .distantFuture).isEmpty)
        #expect(try await reopened.messages(tripId: "T2", after: 0, limit: 10).count == 1)
        #expect(
            try await reopened.append(tripId: "T2", messageId: "b", from: .provider, text: "moi", at: Rows.t0).message
                .seq == 2)
    }
}
