/// The app through Swoop's in-memory test host: each test serves it with an empty store and
/// calls it with HttpClient, through the same parser and response writer as over a socket
/// (no port; thousands of tests stay quick).
module My_App.Tests.ApiTests

open System
open System.Net
open System.Net.Http
open System.Net.Http.Json
open System.Text
open System.Text.Json
open System.Threading.Tasks
open Xunit
open Swoop
open Swoop.Web
open Swoop.Testing
open My_App.Api

let private jsonBody (json: string) =
    new StringContent(json, Encoding.UTF8, "application/json")

type ApiTests() =
    let server = TestServer.Create(app (TodoStore()))
    let client = server.CreateClient()

    interface IAsyncLifetime with
        member _.InitializeAsync() = Task.CompletedTask

        member _.DisposeAsync() =
            client.Dispose()
            (server :> IAsyncDisposable).DisposeAsync().AsTask()

    [<Fact>]
    member _.``GET /hello/{name} greets by name``() =
        task {
            let! response = client.GetAsync "/hello/Ada"
            Assert.Equal(HttpStatusCode.OK, response.StatusCode)
            Assert.Equal("text/plain", response.Content.Headers.ContentType.MediaType)
            let! body = response.Content.ReadAsStringAsync()
            Assert.Equal("Hello, Ada!", body)
        }

    [<Fact>]
    member _.``POST /todos creates an item: 201 with its Location and the item as JSON``() =
        task {
            let! response = client.PostAsync("/todos", jsonBody """{"title":"Write tests"}""")
            Assert.Equal(HttpStatusCode.Created, response.StatusCode)
            Assert.Equal("/todos/1", string response.Headers.Location)
            let! created = response.Content.ReadFromJsonAsync<Todo>()
            Assert.Equal({ Id = 1; Title = "Write tests"; Done = false }, created)

            let! fetched = client.GetFromJsonAsync<Todo> "/todos/1"
            Assert.Equal(created, fetched)
        }

    [<Fact>]
    member _.``GET /todos lists the items in the order they were made``() =
        task {
            let! empty = client.GetFromJsonAsync<Todo[]> "/todos"
            Assert.Empty empty

            for title in [ "one"; "two" ] do
                let! response = client.PostAsync("/todos", jsonBody (sprintf """{"title":"%s"}""" title))
                response.EnsureSuccessStatusCode() |> ignore

            let! all = client.GetFromJsonAsync<Todo[]> "/todos"
            Assert.Equal<string[]>([| "one"; "two" |], all |> Array.map (fun t -> t.Title))
        }

    [<Fact>]
    member _.``GET /todos/{id} of an unknown item is 404 with a problem description``() =
        task {
            let! response = client.GetAsync "/todos/42"
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode)
            Assert.Equal("application/problem+json", response.Content.Headers.ContentType.MediaType)
        }

    [<Theory>]
    [<InlineData("not json")>]
    [<InlineData("""{"name":"no title"}""")>]
    [<InlineData("""{"title":null}""")>]
    member _.``POST /todos with a body that is not a NewTodo is 400 and creates nothing``(body: string) =
        task {
            let! response = client.PostAsync("/todos", jsonBody body)
            Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode)
            Assert.Equal("application/problem+json", response.Content.Headers.ContentType.MediaType)
            let! all = client.GetFromJsonAsync<Todo[]> "/todos"
            Assert.Empty all
        }

    [<Fact>]
    member _.``POST /todos with a Content-Type other than JSON is 415``() =
        task {
            let! response = client.PostAsync("/todos", new StringContent("""{"title":"x"}""", Encoding.UTF8, "text/plain"))
            Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode)
        }

    [<Fact>]
    member _.``POST /todos with an empty title is 422 naming the field``() =
        task {
            let! response = client.PostAsync("/todos", jsonBody """{"title":"  "}""")
            Assert.Equal(HttpStatusCode.UnprocessableEntity, response.StatusCode)
            let! problem = response.Content.ReadFromJsonAsync<JsonElement>()
            let titleErrors = problem.GetProperty("errors").GetProperty("title")
            Assert.Equal("must not be empty", titleErrors[0].GetString())
        }

    [<Fact>]
    member _.``a known path with another method is 405 with the methods it allows``() =
        task {
            let! response = client.DeleteAsync "/todos"
            Assert.Equal(HttpStatusCode.MethodNotAllowed, response.StatusCode)
            Assert.Equal("GET, HEAD, POST", String.Join(", ", response.Content.Headers.Allow))
        }
