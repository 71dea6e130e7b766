#pragma once
// What a command may write over: an output path that holds nothing, a regular file, or a
// symbolic link to a regular file or to nothing. Anything else there — a directory, a FIFO, a
// character or block device, a socket, or a symbolic link to one of those — is refused before
// anything is written, so that a rename of a temporary file (or a plain open) never replaces or
// writes into what is not a regular file (run as root, a rename would replace a device node).
// Used by GgufWriter::write_file and the commands that write files (draft-model, synth-model,
// generate --output).

#include <string>

namespace plinth {

/// "" when `path` may be replaced by (or opened as) a regular file; else what is there, in
/// words: "a directory", "a FIFO (named pipe)", "a character device", "a block device",
/// "a socket", or "a symbolic link to " one of those. A path that cannot be inspected for
/// another reason (e.g. a folder on it not searchable) gives "" — the write itself then fails
/// with the system's reason. Thread-safe; no exceptions.
std::string non_regular_output(const std::string& path);

/// The message for such a path: "PATH is KIND, not a regular file; give the path of a regular
/// file (it is replaced) or of a new one".
std::string non_regular_output_message(const std::string& path, const std::string& kind);

}  // namespace plinth
