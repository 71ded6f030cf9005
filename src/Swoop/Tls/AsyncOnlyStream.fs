/// A Stream whose bytes move only through ReadAsync(Memory) and WriteAsync(ReadOnlyMemory):
/// the base of the streams the server puts under a connection (TLS's socket stream, the test
/// host's in-memory ends). Every synchronous member, and seeking, raise NotSupportedException
/// naming `what`: a synchronous read would block an event loop's thread.
namespace Swoop

open System
open System.IO
open System.Threading
open System.Threading.Tasks

[<AbstractClass>]
type internal AsyncOnlyStream(what: string) =
    inherit Stream()

    member private _.Synchronous() : 'T =
        raise (NotSupportedException(what + " is read and written asynchronously only"))

    override _.CanRead = true
    override _.CanWrite = true
    override _.CanSeek = false
    override this.Length = this.Synchronous()

    override this.Position
        with get () = this.Synchronous()
        and set (_: int64) = this.Synchronous()

    override this.Seek(_: int64, _: SeekOrigin) : int64 = this.Synchronous()
    override this.SetLength(_: int64) = this.Synchronous()
    override _.Flush() = ()
    override _.FlushAsync(_: CancellationToken) = Task.CompletedTask
    override this.Read(_: byte[], _: int, _: int) : int = this.Synchronous()
    override this.Write(_: byte[], _: int, _: int) = this.Synchronous()

    override this.ReadAsync(buffer: byte[], offset: int, count: int, cancellation: CancellationToken) : Task<int> =
        this.ReadAsync(Memory<byte>(buffer, offset, count), cancellation).AsTask()

    override this.WriteAsync(buffer: byte[], offset: int, count: int, cancellation: CancellationToken) : Task =
        this.WriteAsync(ReadOnlyMemory<byte>(buffer, offset, count), cancellation).AsTask()
