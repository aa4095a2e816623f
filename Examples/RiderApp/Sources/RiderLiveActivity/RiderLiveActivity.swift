import Foundation
import OrderTracking
import OrderTrackingActivity
import SwiftUI
import WidgetKit

/// The widget extension: the delivery's Live Activity.
@main
struct RiderWidgets: WidgetBundle {
    var body: some Widget {
        OrderLiveActivity()
    }
}

/// The delivery on the Lock Screen and in the Dynamic Island: the status, the latest arrival time and the stops before
/// it, as the app's updates and the server's pushes set them; a tap opens the order in the app.
struct OrderLiveActivity: Widget {
    var body: some WidgetConfiguration {
        ActivityConfiguration(for: OrderTrackingActivityAttributes.self) { context in
            HStack {
                Image(systemName: "bicycle.circle.fill").font(.largeTitle)
                VStack(alignment: .leading) {
                    Text(context.state.title).font(.headline)
                    ArrivalText(state: context.state).font(.subheadline)
                    if let stops = context.state.stopsLine {
                        Text(stops).font(.caption).foregroundStyle(.secondary)
                    }
                }
                Spacer()
            }
            .padding()
            .opacity(context.isStale ? 0.6 : 1)
            .widgetURL(Self.link(to: context.attributes))
        } dynamicIsland: { context in
            DynamicIsland {
                DynamicIslandExpandedRegion(.leading) { Image(systemName: "bicycle") }
                DynamicIslandExpandedRegion(.center) { Text(context.state.title) }
                DynamicIslandExpandedRegion(.trailing) { ArrivalText(state: context.state) }
                DynamicIslandExpandedRegion(.bottom) {
                    if let stops = context.state.stopsLine { Text(stops).font(.caption) }
                }
            } compactLeading: {
                Image(systemName: "bicycle")
            } compactTrailing: {
                ArrivalText(state: context.state)
            } minimal: {
                Image(systemName: "bicycle")
            }
            .widgetURL(Self.link(to: context.attributes))
        }
    }

    /// The order in the app, through the app's own scheme (this extension's `EnRouteURLScheme`, the app's value).
    private static func link(to attributes: OrderTrackingActivityAttributes) -> URL? {
        let scheme = Bundle.main.object(forInfoDictionaryKey: "EnRouteURLScheme") as? String ?? "enroute"
        return URL(string: "\(scheme)://orders/\(attributes.orderID)")
    }
}

/// "by 12:40" while an arrival time is known.
struct ArrivalText: View {
    let state: OrderTrackingActivityAttributes.ContentState

    var body: some View {
        if let latest = state.etaLatest {
            Text("by \(Date(timeIntervalSince1970: TimeInterval(latest)), style: .time)")
        }
    }
}
