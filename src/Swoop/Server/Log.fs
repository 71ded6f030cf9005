/// Where the server's own messages go: standard error, a line each. Plain strings, not F#
/// format strings: the server core must run in a native AOT build, where printf cannot.
module internal Swoop.Log

let error (message: string) = System.Console.Error.WriteLine message
