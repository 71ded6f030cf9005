module Swoop.Tests.MultipartTests

open System
open System.IO
open System.Net
open System.Net.Http
open Xunit
open Swoop
open Swoop.Web
open Swoop.Tests.WebSupport

/// Where the last upload's temporary file was, to check it is gone after the request.
let mutable lastTemp: string = null

let upload: HttpHandler =
    fun next ctx ->
        task {
            let! form = ctx.ReadMultipartAsync()
            let files =
                [ for f in form.Files do
                      if not (isNull f.TempPath) then
                          lastTemp <- f.TempPath
                          Assert.True(File.Exists f.TempPath)
                      use s = f.OpenReadStream()
                      use ms = new MemoryStream()
                      s.CopyTo ms
                      let sum = ms.ToArray() |> Array.sumBy int64
                      sprintf "%s:%s:%s:%d:%d:%b" f.Name f.FileName f.ContentType f.Length sum (isNull f.TempPath) ]
            let fields = form.Fields.Pairs |> Array.map (fun (k, v) -> k + "=" + v) |> String.concat ","
            return! text (fields + "|" + String.Join(";", files)) next ctx
        }

type Profile = { Name: string; Age: int }

let app =
    choose [
        POST >=> route "/upload" >=> upload
        POST >=> route "/profile" >=> bindForm<Profile> (fun p -> text (sprintf "%s %d" p.Name p.Age))
    ]

let client (server: RunningServer) = new HttpClient(BaseAddress = Uri(sprintf "http://127.0.0.1:%d" server.Port))

[<Fact>]
let ``fields and files are read; a large file goes to a temporary file deleted after the request`` () =
    task {
        use server = serveApp app
        use http = client server
        use content = new MultipartFormDataContent()
        content.Add(new StringContent("Zoë"), "title")
        let small = new ByteArrayContent([| 1uy; 2uy; 3uy |])
        small.Headers.ContentType <- Headers.MediaTypeHeaderValue("image/png")
        content.Add(small, "icon", "icon.png")
        // No Content-Type on a part: text/plain, as RFC 7578 says.
        let bigData = Array.init 300_000 (fun i -> byte (i % 251))
        content.Add(new ByteArrayContent(bigData), "big", "big.bin")
        let! response = http.PostAsync("/upload", content)
        let! body = response.Content.ReadAsStringAsync()
        Assert.Equal(HttpStatusCode.OK, response.StatusCode)
        let expectedSum = bigData |> Array.sumBy int64
        Assert.Equal(sprintf "title=Zoë|icon:icon.png:image/png:3:6:true;big:big.bin:text/plain:300000:%d:false" expectedSum, body)
        Assert.NotNull lastTemp
        Assert.False(File.Exists lastTemp, "the temporary file is deleted after the request")
    }

[<Fact>]
let ``bindForm reads multipart fields too`` () =
    task {
        use server = serveApp app
        use http = client server
        use content = new MultipartFormDataContent()
        content.Add(new StringContent("Ada"), "name")
        content.Add(new StringContent("36"), "age")
        let! response = http.PostAsync("/profile", content)
        let! body = response.Content.ReadAsStringAsync()
        Assert.Equal("Ada 36", body)
    }

let raw (body: string) =
    [ "Content-Type: multipart/form-data; boundary=XyZ" ], body.Replace("\n", "\r\n")

[<Fact>]
let ``malformed bodies are 400, limits are 413, other types 415`` () =
    use server = serveAppWith { WebOptions.defaults with Multipart = { WebOptions.defaults.Multipart with MaxParts = 2; MaxPartSize = 1000L } } app
    let send (headers, body) = request server "POST" "/upload" headers body
    // no closing boundary
    Assert.Equal(400, (send (raw "--XyZ\nContent-Disposition: form-data; name=\"a\"\n\n1\n")).Status)
    // no Content-Disposition
    Assert.Equal(400, (send (raw "--XyZ\nX: y\n\n1\n--XyZ--\n")).Status)
    // no boundary at all
    Assert.Equal(400, (send (raw "hello")).Status)
    // a good one, with a preamble and an epilogue
    let ok = send (raw "preamble\n--XyZ\nContent-Disposition: form-data; name=\"a\"\n\n1\n--XyZ--\nepilogue")
    Assert.Equal("a=1|", ok.Body)
    let three = "--XyZ\nContent-Disposition: form-data; name=\"a\"\n\n1\n" |> String.replicate 3
    Assert.Equal(413, (send (raw (three + "--XyZ--\n"))).Status)
    let big = "--XyZ\nContent-Disposition: form-data; name=\"f\"; filename=\"f\"\n\n" + String('x', 2000) + "\n--XyZ--\n"
    Assert.Equal(413, (send (raw big)).Status)
    Assert.Equal(415, (request server "POST" "/upload" [ "Content-Type: text/plain" ] "x").Status)
    Assert.Equal(400, (request server "POST" "/upload" [ "Content-Type: multipart/form-data" ] "x").Status)

[<Fact>]
let ``header parameters keep quoted semicolons and read filename*`` () =
    Assert.Equal(Some "a;b.txt", Multipart.parameter "form-data; name=\"f\"; filename=\"a;b.txt\"" "filename")
    Assert.Equal(Some "say \"hi\"", Multipart.parameter "form-data; name=\"say \\\"hi\\\"\"" "name")
    Assert.Equal(Some "naïve.txt", Multipart.fileName "form-data; name=f; filename*=UTF-8''na%C3%AFve.txt")

[<Fact>]
let ``temporary files are readable by the server's user only`` () =
    task {
        let mutable mode = enum<UnixFileMode> 0
        let app =
            route "/up" >=> fun next ctx ->
                task {
                    let! form = ctx.ReadMultipartAsync()
                    for f in form.Files do
                        if not (isNull f.TempPath) then mode <- File.GetUnixFileMode f.TempPath
                    return! text "ok" next ctx
                }
        use server = serveApp app
        use http = client server
        use content = new MultipartFormDataContent()
        content.Add(new ByteArrayContent(Array.zeroCreate 200_000), "f", "f.bin")
        let! r = http.PostAsync("/up", content)
        Assert.Equal(HttpStatusCode.OK, r.StatusCode)
        Assert.Equal(UnixFileMode.UserRead ||| UnixFileMode.UserWrite, mode)
    }

[<Fact>]
let ``all fields together are held to the form's size`` () =
    use server = serveAppWith { WebOptions.defaults with MaxFormSize = 100L } app
    let field i = sprintf "--XyZ\nContent-Disposition: form-data; name=\"f%d\"\n\n%s\n" i (String('x', 60))
    Assert.Equal(413, (request server "POST" "/upload" (fst (raw "")) (snd (raw (field 1 + field 2 + "--XyZ--\n")))).Status)

[<Fact>]
let ``SaveAsAsync moves a spooled part to its destination, with a new file's mode, and copies after that`` () =
    task {
        let folder = Path.Combine(Path.GetTempPath(), "swoop-save-" + Guid.NewGuid().ToString("N"))
        Directory.CreateDirectory folder |> ignore

        try
            let mutable seen = ""
            let app =
                route "/save" >=> fun next ctx ->
                    task {
                        let! form = ctx.ReadMultipartAsync()
                        let big = form.Files |> List.find (fun f -> f.Name = "big")
                        let small = form.Files |> List.find (fun f -> f.Name = "small")
                        let temp = big.TempPath
                        let first = Path.Combine(folder, "first.bin")
                        do! big.SaveAsAsync first
                        // Moved: the temporary file is gone, the data is read from its new place.
                        let afterMove = sprintf "%b %b %b" (File.Exists temp) (isNull big.TempPath) (File.Exists first)
                        use again = big.OpenReadStream()
                        use copy = new MemoryStream()
                        do! again.CopyToAsync copy
                        // A second save copies (the first destination stays); one to where
                        // it already is changes nothing.
                        do! big.SaveAsAsync(Path.Combine(folder, "second.bin"))
                        do! big.SaveAsAsync(Path.Combine(folder, ".", "first.bin"))
                        do! small.SaveAsAsync(Path.Combine(folder, "small.bin"))
                        seen <- sprintf "%s %d" afterMove copy.Length
                        return! text "ok" next ctx
                    }
            use server = serveApp app
            use http = client server
            use content = new MultipartFormDataContent()
            let bigData = Array.init 200_000 (fun i -> byte (i % 253))
            content.Add(new ByteArrayContent(bigData), "big", "big.bin")
            content.Add(new ByteArrayContent([| 7uy; 8uy |]), "small", "small.bin")
            let! r = http.PostAsync("/save", content)
            Assert.Equal(HttpStatusCode.OK, r.StatusCode)
            Assert.Equal("false true true 200000", seen)
            Assert.Equal<byte[]>(bigData, File.ReadAllBytes(Path.Combine(folder, "first.bin")))
            Assert.Equal<byte[]>(bigData, File.ReadAllBytes(Path.Combine(folder, "second.bin")))
            Assert.Equal<byte[]>([| 7uy; 8uy |], File.ReadAllBytes(Path.Combine(folder, "small.bin")))
            // The moved file has the mode a new file gets (as the copy has), not the
            // temporary file's owner-only mode.
            Assert.Equal(
                File.GetUnixFileMode(Path.Combine(folder, "second.bin")),
                File.GetUnixFileMode(Path.Combine(folder, "first.bin"))
            )
        finally
            Directory.Delete(folder, true)
    }
