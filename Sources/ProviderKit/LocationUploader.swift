public import EnRouteModels
import HTTPTransport

/// The platform's location sync: uploads the point buffer in batches, every few seconds during a trip and less often
/// while idle, oldest first; a failed batch stays and goes again, unchanged, on a later tick.
public actor LocationUploader {
    /// How often to upload.
    public struct Cadence: Sendable, Equatable {
        /// The interval while on a trip (somebody watches the marker).
        public var onTrip: Duration
        /// The interval while online and idle; a whole multiple of `onTrip`.
        public var idle: Duration
        /// Every `onTrip` during a trip, every `idle` otherwise.
        public init(onTrip: Duration = .seconds(5), idle: Duration = .seconds(30)) {
            self.onTrip = onTrip; self.idle = idle
        }
    }

    /// What one upload round did.
    public struct Report: Sendable, Equatable {
        /// The server's answers, one per acknowledged batch, in order.
        public var acknowledged: [LocationBatchResult] = []
        /// A batch the server refused for good (a 4xx other than 401, 408, 429): dropped so it cannot block the rest.
        public var discarded: [String] = []
        /// Why the round stopped early; the batch stays buffered.
        public var failure: String?
    }

    private let buffer: PointBuffer
    private let api: any LocationUploading
    private let clock: any Clock<Duration>
    private let cadence: Cadence
    private var onTrip = false
    private var sinceUpload: Duration = .zero
    private var holdOff: Duration = .zero
    private var reports: [AsyncStream<Report>.Continuation] = []

    /// Uploads `buffer` through `api`, timed by `clock`.
    public init(
        buffer: PointBuffer, api: any LocationUploading, clock: any Clock<Duration>, cadence: Cadence = Cadence()
    ) {
        self.buffer = buffer
        self.api = api
        self.clock = clock
        self.cadence = cadence
    }

    /// Switches between the trip cadence and the idle cadence.
    public func setOnTrip(_ onTrip: Bool) { self.onTrip = onTrip }

    /// Every round's report, as it happens.
    public func reportStream() -> AsyncStream<Report> {
        let (stream, continuation) = AsyncStream.makeStream(of: Report.self)
        reports.append(continuation)
        return stream
    }

    /// Ticks every `cadence.onTrip` and uploads when the current interval has passed; returns when cancelled.
    public func run() async {
        while !Task.isCancelled {
            do { try await clock.sleep(for: cadence.onTrip) } catch { return }
            sinceUpload += cadence.onTrip
            if holdOff > .zero { holdOff -= cadence.onTrip; continue }
            guard sinceUpload >= (onTrip ? cadence.onTrip : cadence.idle) else { continue }
            sinceUpload = .zero
            await flush()
        }
    }

    /// Sends batches until the buffer is empty or one fails.
    @discardableResult
    public func flush() async -> Report {
        var report = Report()
        while !Task.isCancelled {
            let batch: LocationBatch?
            do { batch = try buffer.nextBatch() } catch { report.failure = "local store: \(error)"; break }
            guard let batch else { break }
            do {
                let result = try await api.upload(batch)
                try buffer.acknowledge(batch.batchId)
                report.acknowledged.append(result)
            } catch  where SyncBackoff.isTransient(error) {
                report.failure = String(describing: error)
                if case APIError.retryAfter(let asked, _) = error { holdOff = asked }
                break
            } catch {
                try? buffer.acknowledge(batch.batchId)
                report.discarded.append(batch.batchId)
            }
        }
        for continuation in reports { continuation.yield(report) }
        return report
    }
}
