/// The file cache's bounds and freshness over real sockets: the least recently used and the
/// inactive let go, open descriptors held under their bound (a symbolic link loop included),
/// a file replaced under the same length and time noticed, and a hit that allocates nothing.
module Swoop.Tests.FileCacheTests

open System
open System.IO
open System.Text
open System.Threading
open Xunit
open Swoop.Web
open Swoop.Tests.StaticSupport
open System.IO
open System.Threading
open Swoop
open Swoop.Tests.Support
open Swoop.Tests.StaticSupport
open Swoop.Tests.FilesSite

[<Fact>]
let ``a full cache lets the least recently used go and keeps the new`` () =
    let _, root = makeSite ()
    for i in 1..6 do File.WriteAllText(Path.Combine(root, sprintf "f%d.txt" i), sprintf "file %d" i)
    let files = StaticFiles({ StaticFileOptions.defaults with MaxCachedFiles = 4 }, root)
    use server = serveFiles files
    // f1 is used again before f5 and f6 arrive: f2 and f3 are the least recently used.
    for i in [ 1; 2; 3; 4 ] do
        Assert.Equal(sprintf "file %d" i, (getFile server (sprintf "/static/f%d.txt" i) []).Text)
        Thread.Sleep 20

    Assert.Equal("file 1", (getFile server "/static/f1.txt" []).Text)
    Thread.Sleep 20
    for i in [ 5; 6 ] do Assert.Equal(sprintf "file %d" i, (getFile server (sprintf "/static/f%d.txt" i) []).Text)
    Assert.True(files.Cache.Count <= 4, sprintf "%d entries kept, over the bound of 4" files.Cache.Count)
    for kept in [ "/f1.txt"; "/f5.txt"; "/f6.txt" ] do
        Assert.NotNull(files.Cache.Find(kept.AsSpan()))
    Assert.Null(files.Cache.Find("/f2.txt".AsSpan()))

[<Fact>]
let ``a symbolic link loop multiplies paths, not held descriptors`` () =
    let _, root = makeSite ()
    Directory.CreateSymbolicLink(Path.Combine(root, "loop"), ".") |> ignore
    let files = StaticFiles({ StaticFileOptions.defaults with MaxOpenFiles = 8 }, root, 100)
    use server = serveFiles files
    let before = heldUnder root
    let expected = pattern (64 * 1024)

    for depth in 1..40 do
        let target = "/static/" + String.replicate depth "loop/" + "mid.bin"
        let r = getFile server target []
        Assert.Equal(200, r.Status)
        Assert.Equal<byte[]>(expected, r.Body)
        Assert.True(files.Cache.OpenHandles <= 8, sprintf "%d handles counted after %s" files.Cache.OpenHandles target)

    Assert.True(waitUntil 10000 (fun () -> heldUnder root - before <= 8), sprintf "%d descriptors held under the root" (heldUnder root - before))

[<Fact>]
let ``an entry unused for CacheInactive is let go and its descriptor closed`` () =
    let _, root = makeSite ()
    let files = StaticFiles({ StaticFileOptions.defaults with CacheInactive = TimeSpan.FromSeconds 2.0 }, root, 100)
    use server = serveFiles files
    Assert.Equal(200, (getFile server "/static/big.bin" []).Status)
    Assert.Equal(1, files.Cache.Count)
    Assert.True(heldUnder root >= 1, "the large file's descriptor is held while it is in use")
    Assert.True(waitUntil 10000 (fun () -> files.Cache.Count = 0 && files.Cache.OpenHandles = 0 && heldUnder root = 0), "still held after going unused")
    Assert.Equal(3 * 1024 * 1024 + 17, (getFile server "/static/big.bin" []).Body.Length)

[<Fact>]
let ``a file replaced with the same length and modification time is noticed`` () =
    let _, root = makeSite ()
    let path = Path.Combine(root, "same.txt")
    File.WriteAllText(path, "old bytes")
    let time = DateTime.UtcNow.AddMinutes -5.0
    File.SetLastWriteTimeUtc(path, time)
    use server = serveSite { StaticFileOptions.defaults with Revalidate = TimeSpan.FromMilliseconds 100.0 } root
    Assert.Equal("old bytes", (getFile server "/static/same.txt" []).Text)
    // rsync's way: a new file beside it, renamed over it (a new inode, the same length and time).
    let fresh = Path.Combine(root, ".same.txt.tmp")
    File.WriteAllText(fresh, "new bytes")
    File.SetLastWriteTimeUtc(fresh, time)
    File.Move(fresh, path, true)
    Thread.Sleep 250
    Assert.Equal("new bytes", (getFile server "/static/same.txt" []).Text)

[<Fact>]
let ``finding a kept entry allocates nothing`` () =
    let _, root = makeSite ()
    // Revalidated once an hour: only the lookup and its stamp are measured (a revalidation,
    // once a second by default, stats without allocating too, but may meet a new sibling).
    let files = StaticFiles({ StaticFileOptions.defaults with Revalidate = TimeSpan.FromHours 1.0 }, root)
    use server = serveFiles files
    Assert.Equal(200, (getFile server "/static/hello.txt" []).Status)
    Assert.Equal(200, (getFile server "/static/big.bin" []).Status)
    let hello = "/hello.txt".AsSpan()
    Assert.NotNull(files.Cache.Find hello)

    let finds () =
        for _ in 1..10_000 do
            files.Cache.Find("/hello.txt".AsSpan()) |> ignore
            files.Cache.Find("/big.bin".AsSpan()) |> ignore

    // The least of five rounds of 20,000 lookups: the runtime may allocate on this thread now
    // and then for its own work (the JIT's tier-up of the loop and of Find, seen as one ~8 KB
    // charge in a full test run), while a lookup that allocated would show in every round.
    let rounds =
        [ for _ in 1..5 ->
              let before = GC.GetAllocatedBytesForCurrentThread()
              finds ()
              GC.GetAllocatedBytesForCurrentThread() - before ]

    Assert.Equal(0L, List.min rounds)

[<Fact>]
let ``a file changed on disk is noticed after the revalidation interval`` () =
    let _, root = makeSite ()
    use changing = serveSite { StaticFileOptions.defaults with Revalidate = TimeSpan.FromMilliseconds 100.0 } root
    let first = getFile changing "/static/hello.txt" []
    File.WriteAllText(Path.Combine(root, "hello.txt"), "Changed, and longer")
    File.SetLastWriteTimeUtc(Path.Combine(root, "hello.txt"), DateTime.UtcNow.AddMinutes 1.0)
    Thread.Sleep 200
    let second = getFile changing "/static/hello.txt" []
    Assert.Equal("Changed, and longer", second.Text)
    Assert.NotEqual(first.Header "ETag", second.Header "ETag")
    File.Delete(Path.Combine(root, "hello.txt"))
    Thread.Sleep 200
    Assert.Equal(404, (getFile changing "/static/hello.txt" []).Status)
