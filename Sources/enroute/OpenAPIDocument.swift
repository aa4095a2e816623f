import Foundation

/// The OpenAPI document (docs/openapi.yaml) shipped as a resource and served at `/openapi.yaml`.
enum OpenAPIDocument {
    static func text() -> String {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
              let text = try? String(contentsOf: url, encoding: .utf8) else { return "openapi: 3.1.0\n" }
        return text
    }
}
