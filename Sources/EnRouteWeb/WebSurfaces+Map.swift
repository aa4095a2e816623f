import Foundation
import HTTPEngine
import EnRouteModels

extension WebSurfaces {
    /// Leaflet's files the pages load; nothing else of the directory is served.
    static let leafletFiles: [String: String] = [
        "leaflet.js": "text/javascript; charset=utf-8", "leaflet.css": "text/css; charset=utf-8",
    ]

    func addMapRoutes(_ r: inout Router) {
        r.get(APIPath.Template.roadMap) { [self] _ in
            guard let roadMap else {
                throw HTTPError(
                    status: 503, title: "Service Unavailable",
                    detail: "The server runs without a road graph (start it with --graph FILE).",
                    type: "https://enroute.dev/problems/no-road-network")
            }
            var response = HTTPResponse.jsonBytes(roadMap.geoJSON())
            response.headers.set("Content-Type", "application/geo+json")
            response.headers.set("Cache-Control", "max-age=3600")
            return response
        }
        let directory = configuration.leafletDirectory
        r.get(APIPath.Template.leafletAsset) { req in
            let name = try req.parameter("file")
            guard let type = Self.leafletFiles[name] else {
                throw HTTPError.notFound("Only leaflet.js and leaflet.css are served.")
            }
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw HTTPError(
                    status: 503, title: "Service Unavailable",
                    detail:
                        "Leaflet is not installed at \(directory) (run scripts/install-web.sh, or start with "
                        + "--leaflet-dir DIR)."
                )
            }
            var response = HTTPResponse.text("", contentType: type)
            response.body = .bytes(Array(data))
            response.headers.set("Cache-Control", "max-age=86400")
            return response
        }
    }
}
