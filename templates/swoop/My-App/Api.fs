/// The API: its records, an in-memory store, the handlers and the routes.
module My_App.Api

open System
open System.Collections.Concurrent
open System.Threading
open Swoop.Web

/// A to-do item, as the API shows it (JSON: {"id":1,"title":"...","done":false}).
type Todo = { Id: int; Title: string; Done: bool }

/// What a client sends to create an item (JSON: {"title":"..."}).
type NewTodo = { Title: string }

/// Items in memory, safe to use from concurrent requests. Swap it for a database.
type TodoStore() =
    let items = ConcurrentDictionary<int, Todo>()
    let mutable lastId = 0

    member _.All() : Todo list =
        items.Values |> Seq.sortBy (fun t -> t.Id) |> List.ofSeq

    member _.TryFind(id: int) : Todo option =
        match items.TryGetValue id with
        | true, todo -> Some todo
        | _ -> None

    member _.Add(title: string) : Todo =
        let todo = { Id = Interlocked.Increment &lastId; Title = title; Done = false }
        items[todo.Id] <- todo
        todo

// ---- handlers ----

let hello (name: string) : HttpHandler = text (sprintf "Hello, %s!" name)

let listTodos (store: TodoStore) : HttpHandler =
    fun next ctx -> json (store.All()) next ctx

let getTodo (store: TodoStore) (id: int) : HttpHandler =
    match store.TryFind id with
    | Some todo -> json todo
    | None -> notFound (sprintf "there is no todo %d" id)

/// The field errors of a new item (answered 422), or the item as it will be stored.
let checkTodo (input: NewTodo) : Result<NewTodo, (string * string) list> =
    if String.IsNullOrWhiteSpace input.Title then Error [ "title", "must not be empty" ]
    else Ok { input with Title = input.Title.Trim() }

let createTodo (store: TodoStore) (input: NewTodo) : HttpHandler =
    fun next ctx ->
        let todo = store.Add input.Title
        ctx.SetHeader("Location", sprintf "/todos/%d" todo.Id)
        (setStatusCode 201 >=> json todo) next ctx

// ---- routes ----

/// The whole app. Routes are compiled into a lookup once, when the server starts; a path
/// that no route takes gets 404, a known path with another method 405 (with Allow). A body
/// that is not JSON, or lacks a field, is answered 400 by `bindJson`; `validate` answers 422.
let app (store: TodoStore) : HttpHandler =
    choose
        [ GET >=> paramNames [ "name" ] >=> routef "/hello/%s" hello
          GET >=> route "/todos" >=> listTodos store
          GET >=> paramNames [ "id" ] >=> routef "/todos/%i" (getTodo store)
          POST >=> route "/todos" >=> bindJson<NewTodo> (validate checkTodo (createTodo store)) ]
