import Foundation

let code = await CommandLineTool.run(Array(CommandLine.arguments.dropFirst()))
exit(code)
