import ArgumentParser
import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarCommands
import KeyjarCore
import KeyjarIdentity
import KeyjarLoader
import KeyjarLocks
import Synchronization

/// Where the body goes (`-o`, `-O`, standard output) and what `-C` continues from.
extension FetchCommand {
    enum BodyTarget {
        case standardOutput
        case special(String)
        case file(FetchFile)
    }

    func outputTarget() throws(CLIError) -> BodyTarget {
        let directory = outputDir.map { ($0 as NSString).expandingTildeInPath }
        if let directory {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw .failure("--output-dir \(directory) is not a directory.")
            }
        }
        let current = FileManager.default.currentDirectoryPath
        if remoteName {
            return .file(
                .serverName(directory: OutputFile.absolute(directory ?? current, in: current), overwrite: overwrite)
            )
        }
        guard let output else { return .standardOutput }
        switch try OutputFile.resolve(output, in: directory.map { OutputFile.absolute($0, in: current) } ?? current) {
        case .standardOutput: return .standardOutput
        case .regular(let path): return .file(.path(path))
        case .special(let path):
            if continueDownload {
                throw .usage("-C continues a download in a regular file, and \(output) is not one.")
            }
            return .special(path)
        }
    }

    /// With -C: the interrupted download of this URL that the file's record describes.
    func resumable(_ file: FetchFile, url: URL?) throws(CLIError) -> DownloadResumeData? {
        guard continueDownload, let url else { return nil }
        let record: DownloadResumeData?
        switch file {
        case .path(let path):
            do {
                record = try DownloadResumeData.record(forDestination: path)
            } catch {
                throw .failure("\(error.description) Remove it to download from the start.")
            }
            if let record, record.url != url {
                if !silent {
                    Output.error(
                        "the partial data for \(path) is of \(record.url.absoluteString); downloading from the start."
                    )
                }
                return nil
            }
        case .serverName(let directory, _):
            record = DownloadResumeData.records(in: directory, for: url).first
        }
        if record == nil, !silent { Output.error("nothing to continue for this URL; downloading from the start.") }
        return record
    }

    /// Runs the load on one serial queue (delegate, time limit and signals alike) until it ends.
}
