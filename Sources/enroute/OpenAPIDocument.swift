import Foundation

/// The OpenAPI document shipped as a resource (Sources/enroute/Resources/openapi.yaml, linked from
/// docs/openapi.yaml) and served at `/openapi.yaml`.
enum OpenAPIDocument {
    /// The document; a clear error when the executable was installed without its resource bundle.
    static func text() throws -> String {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let text = try? String(contentsOf: url, encoding: .utf8), text.contains("\npaths:")
        else {
            throw CLIError(
                "the OpenAPI document is missing from the resource bundle (EnRoute_enroute.resources beside the "
                    + "executable)"
            )
        }
        return text
    }
}
