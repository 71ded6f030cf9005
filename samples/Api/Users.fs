/// The users resource: an in-memory store, safe for concurrent requests, and its handlers.
module Api.Users

open System
open System.Collections.Concurrent
open System.Threading
open Swoop
open Swoop.Web

type NewUser = { Name: string; Email: string }

type User = { Id: int; Name: string; Email: string }

let private store = ConcurrentDictionary<int, User>()
let mutable private lastId = 0

/// Name not empty, email with an '@': the field errors answered 422.
let check (user: NewUser) =
    [ if String.IsNullOrWhiteSpace user.Name then "name", "must not be empty"
      if not (user.Email.Contains '@') then "email", "must contain an @" ]
    |> function
        | [] -> Ok { user with Name = user.Name.Trim() }
        | errors -> Error errors

let create (user: NewUser) : HttpHandler =
    fun next ctx ->
        let id = Interlocked.Increment &lastId
        let created = { Id = id; Name = user.Name; Email = user.Email }
        store[id] <- created
        ctx.SetHeader("Location", "/users/" + string id)
        (setStatusCode 201 >=> json created) next ctx

let get (id: int) : HttpHandler =
    match store.TryGetValue id with
    | true, user -> json user
    | _ -> notFound ("no user " + string id)

let update (id: int) (user: NewUser) : HttpHandler =
    let updated = { Id = id; Name = user.Name; Email = user.Email }

    if store.TryUpdate(id, updated, (match store.TryGetValue id with | true, u -> u | _ -> updated)) then
        json updated
    else
        notFound ("no user " + string id)

let remove (id: int) : HttpHandler =
    match store.TryRemove id with
    | true, _ -> Successful.noContent
    | _ -> notFound ("no user " + string id)

/// `?limit=&offset=`: typed (a non-number is 400), limit 1..1000 (default 100).
let list: HttpHandler =
    fun next ctx ->
        let limit = ctx.QueryValue<int> "limit" |> Option.defaultValue 100
        let offset = ctx.QueryValue<int> "offset" |> Option.defaultValue 0

        if limit < 1 || limit > 1000 || offset < 0 then
            (badRequest "limit must be 1 to 1000 and offset not negative") next ctx
        else
            let page =
                store.Values |> Seq.sortBy (fun u -> u.Id) |> Seq.skip (min offset store.Count) |> Seq.truncate limit |> List.ofSeq

            json page next ctx

/// `?name=&limit=` bound to a record (a limit that is not a number is 400, naming it).
type Search = { Name: string option; Limit: int option }

/// Users whose name contains `name` (ignoring case), at most `limit` (default 100).
let search (query: Search) : HttpHandler =
    let found =
        store.Values
        |> Seq.filter (fun u -> query.Name |> Option.forall (fun n -> u.Name.Contains(n, StringComparison.OrdinalIgnoreCase)))
        |> Seq.sortBy (fun u -> u.Id)
        |> Seq.truncate (query.Limit |> Option.defaultValue 100 |> max 0)
        |> List.ofSeq

    json found
