/// Giraffe's HttpContext members and small views of ASP.NET Core's Request and Response, so
/// that ported handlers compile unchanged.
namespace Swoop.Web

open System
open System.IO
open System.Runtime.CompilerServices
open System.Text
open System.Threading.Tasks
open Swoop

[<Struct; IsReadOnly; NoEquality; NoComparison>]
type HeaderValues =
    val private ctx: HttpContext
    val private name: string
    new(ctx, name) = { ctx = ctx; name = name }

    member private this.Matches(i: int) =
        String.Equals(this.ctx.HeaderName i, this.name, StringComparison.OrdinalIgnoreCase)

    member this.Count =
        let mutable n = 0

        for i in 0 .. this.ctx.HeaderCount - 1 do
            if this.Matches i then n <- n + 1

        n

    member this.ToArray() =
        let ctx = this.ctx
        let name = this.name

        [| for i in 0 .. ctx.HeaderCount - 1 do
               if String.Equals(ctx.HeaderName i, name, StringComparison.OrdinalIgnoreCase) then ctx.HeaderValue i |]

    member this.Item
        with get (index: int) =
            let values = this.ToArray()

            if index < 0 || index >= values.Length then
                raise (IndexOutOfRangeException("the request has " + string values.Length + " '" + this.name + "' header lines, not " + string (index + 1)))

            values[index]

    override this.ToString() = String.Join(",", this.ToArray())

[<Struct; IsReadOnly; NoEquality; NoComparison>]
type PathView =
    val private ctx: HttpContext
    new(ctx) = { ctx = ctx }
    member this.Value = this.ctx.Path
    member _.HasValue = true

    member this.StartsWithSegments(prefix: string) =
        let path = this.ctx.Path
        let prefix = prefix.TrimEnd '/'

        path.StartsWith(prefix, StringComparison.OrdinalIgnoreCase)
        && (path.Length = prefix.Length || path[prefix.Length] = '/')

    override this.ToString() = this.ctx.Path

[<Struct; IsReadOnly; NoEquality; NoComparison>]
type RequestHeadersView =
    val private ctx: HttpContext
    new(ctx) = { ctx = ctx }
    member this.Item with get (name: string) = HeaderValues(this.ctx, name)
    member this.ContainsKey(name: string) = this.ctx.Header(name).IsSome

    member this.TryGetValue(name: string, value: byref<HeaderValues>) =
        value <- HeaderValues(this.ctx, name)
        this.ContainsKey name

    member this.Count = this.ctx.HeaderCount

[<Sealed>]
type ResponseHeadersView(ctx: HttpContext) =
    member _.Item with set (name: string) (value: string) = ctx.SetHeader(name, value)
    member _.Append(name: string, value: string) = ctx.AddHeader(name, value)
    member _.Add(name: string, value: string) = ctx.AddHeader(name, value)

[<Struct; IsReadOnly; NoEquality; NoComparison>]
type RequestView =
    val private ctx: HttpContext
    new(ctx) = { ctx = ctx }
    member this.Path = PathView this.ctx
    member this.Method = this.ctx.MethodName
    member this.Headers = RequestHeadersView this.ctx
    member this.QueryString = if this.ctx.QueryString = "" then "" else "?" + this.ctx.QueryString

    member this.ContentType =
        match this.ctx.Header "Content-Type" with
        | ValueSome v -> v
        | ValueNone -> null

    member this.ContentLength =
        match this.ctx.RequestContentLength with
        | ValueSome n -> Nullable n
        | ValueNone -> Nullable()

    member this.Body = this.ctx.RequestBody

    member this.HasFormContentType =
        Binding.hasMediaType this.ctx "application/x-www-form-urlencoded" || Binding.hasMediaType this.ctx "multipart/form-data"

[<Sealed>]
type ResponseView(ctx: HttpContext) =
    let headers = ResponseHeadersView ctx
    let cookies = ResponseCookies ctx

    member _.StatusCode
        with get () = ctx.StatusCode
        and set (value: int) = ctx.StatusCode <- value

    member _.ContentType
        with get () = ctx.ContentType
        and set (value: string) = ctx.ContentType <- value

    member _.Headers = headers
    member _.Cookies = cookies
    member _.HasStarted = ctx.HasStarted

    member _.WriteAsync(text: string) : Task =
        ctx.WriteString text
        Task.CompletedTask

    member _.Redirect(location: string, ?permanent: bool) =
        ctx.StatusCode <- (if defaultArg permanent false then 301 else 302)
        ctx.SetHeader("Location", location)

/// What `ctx.RequestServices` is when the app supplied none: it has no service.
[<Sealed>]
type internal NoServices() =
    static member val Instance = NoServices()

    interface IServiceProvider with
        member _.GetService(_: Type) = null

[<AutoOpen>]
module ContextExtensions =
    /// The services of this request (see WebOptions.Services), found once per connection.
    let private requestServices (ctx: HttpContext) : IServiceProvider =
        let state = RequestState.Of ctx

        match state.Services with
        | null ->
            let services: IServiceProvider =
                match state.Options.Services with
                | None -> NoServices.Instance
                | Some(:? IRequestServicesFactory as factory) ->
                    let perRequest = factory.CreateForConnection()
                    state.RequestServices <- perRequest
                    perRequest
                | Some provider -> provider

            state.Services <- services
            services
        | services -> services

    let private written (ctx: HttpContext) (contentType: string) (bytes: ReadOnlySpan<byte>) =
        if not (isNull contentType) then ctx.ContentType <- contentType
        ctx.Write bytes
        Results.handled

    type HttpContext with
        member ctx.Request = RequestView ctx
        member ctx.Response =
            let state = RequestState.Of ctx

            match state.ResponseView with
            | :? ResponseView as view -> view
            | _ ->
                let view = ResponseView ctx
                state.ResponseView <- view
                view

        member ctx.RequestServices: IServiceProvider = requestServices ctx

        member ctx.GetService<'T>() : 'T =
            match (requestServices ctx).GetService typeof<'T> with
            | :? 'T as service -> service
            | _ ->
                let name = typeof<'T>.FullName

                if (RequestState.Of ctx).Options.Services.IsNone then
                    invalidOp ("no service of type " + name + ": the app has no services (WebOptions.Services)")
                else
                    invalidOp ("no service of type " + name + " is registered in the app's services")

        member ctx.TryGetRequestHeader(key: string) : string option =
            let values = HeaderValues(ctx, key)
            if values.Count = 0 then None else Some(values.ToString())

        member ctx.GetRequestHeader(key: string) : Result<string, string> =
            match ctx.TryGetRequestHeader key with
            | Some v -> Ok v
            | None -> Error("HTTP request header '" + key + "' is missing.")

        member ctx.GetCookieValue(key: string) : string option = ctx.Cookie key

        member ctx.GetRequestUrl() =
            // The target as sent: still percent-encoded, as a URL must be.
            if not (ctx.Target.StartsWith "/") then
                ctx.Target
            else
                match ctx.Header "Host" with
                | ValueSome host -> "http://" + host + ctx.Target
                | ValueNone -> "http://localhost" + ctx.Target

        member ctx.SetHttpHeader(key: string, value: obj) = ctx.SetHeader(key, (if isNull value then "" else value.ToString()))
        member ctx.SetStatusCode(httpStatusCode: int) = ctx.StatusCode <- httpStatusCode
        member ctx.SetContentType(contentType: string) = ctx.ContentType <- contentType

        member ctx.ReadBodyFromRequestAsync() : Task<string> =
            task {
                let! body = ctx.ReadBodyAsync()
                return Encoding.UTF8.GetString body
            }

        member ctx.BindQueryString<'T>() : 'T = ctx.BindQuery<'T>()

        member ctx.WriteBytesAsync(bytes: byte[]) = written ctx null (ReadOnlySpan bytes)
        member ctx.WriteStringAsync(str: string) = written ctx null (ReadOnlySpan(Encoding.UTF8.GetBytes str))
        member ctx.WriteTextAsync(str: string) = written ctx "text/plain; charset=utf-8" (ReadOnlySpan(Encoding.UTF8.GetBytes str))

        member ctx.WriteJsonAsync<'T>(dataObj: 'T) =
            writeJson ctx dataObj
            Results.handled

        [<Diagnostics.CodeAnalysis.RequiresUnreferencedCode "XmlSerializer reads the value's type by reflection">]
        [<Diagnostics.CodeAnalysis.RequiresDynamicCode "XmlSerializer reads the value's type by reflection">]
        member ctx.WriteXmlAsync(dataObj: obj) =
            writeXml ctx dataObj
            Results.handled

        member ctx.WriteHtmlStringAsync(html: string) = written ctx "text/html; charset=utf-8" (ReadOnlySpan(Encoding.UTF8.GetBytes html))

        member ctx.WriteHtmlFileAsync(filePath: string) : HttpFuncResult =
            task {
                let! bytes = File.ReadAllBytesAsync filePath
                return! written ctx "text/html; charset=utf-8" (ReadOnlySpan bytes)
            }
