/// HTML pages: one page written per operation by Giraffe.ViewEngine's own rendering
/// (RenderView.AsBytes.htmlDocument, what Giraffe's htmlView sends), by Swoop.ViewEngine's
/// renderer before prepared views (a StringBuilder per thread, then one UTF-8 pass), by its
/// renderer now (the tree written as UTF-8 straight into the buffer) and by a view prepared
/// at start-up (Template: static HTML encoded once, holes written from the model). The node
/// renderers build the view's tree per page, as an app does; the template needs none.
/// Two pages: the app tier's catalogue (bench/subjects/app, 40 products, 7,131 bytes) and a
/// 500-row table. Swoop's renderers write into an ArrayBufferWriter reused page after page;
/// Giraffe's makes the page's byte array, as its htmlView does.
module Swoop.Benchmarks.ViewBenchmarks

open System
open System.Buffers
open BenchmarkDotNet.Attributes
open Giraffe.ViewEngine
open Swoop.ViewEngine
open AppTier

[<MemoryDiagnoser>]
type ViewBenchmarks() =
    let buffer = ArrayBufferWriter<byte>(512 * 1024)

    let written () = buffer.WrittenCount
    let catalogTree = Catalog.page Catalog.products
    let catalog100Tree = Catalog.page Catalog.products100

    [<GlobalSetup>]
    member _.Setup() =
        // Every renderer writes the same page, byte for byte.
        let check (name: string) (expected: byte[]) (write: unit -> unit) =
            buffer.ResetWrittenCount()
            write ()

            if not (buffer.WrittenSpan.SequenceEqual(ReadOnlySpan expected)) then
                failwithf "%s: %d bytes, not Giraffe's %d" name buffer.WrittenCount expected.Length

        let catalog = RenderView.AsBytes.htmlDocument (Catalog.page Catalog.products)
        check "catalog baseline" catalog (fun () -> BaselineHtmlWriter.document buffer (Catalog.page Catalog.products))
        check "catalog nodes" catalog (fun () -> HtmlWriter.document buffer (Catalog.page Catalog.products))
        check "catalog template" catalog (fun () -> Template.writeTo buffer CatalogTemplate.page Catalog.products)
        let catalog100 = RenderView.AsBytes.htmlDocument (Catalog.page Catalog.products100)
        check "catalog100 nodes" catalog100 (fun () -> HtmlWriter.document buffer (Catalog.page Catalog.products100))
        let table = RenderView.AsBytes.htmlDocument (TablePage.page TablePage.orders)
        check "table baseline" table (fun () -> BaselineHtmlWriter.document buffer (TablePage.page TablePage.orders))
        check "table nodes" table (fun () -> HtmlWriter.document buffer (TablePage.page TablePage.orders))
        check "table template" table (fun () -> Template.writeTo buffer TablePage.template TablePage.orders)

    /// The catalogue's tree alone, built as the app builds it per request (no rendering).
    [<Benchmark>]
    member _.CatalogTreeOnly() = Catalog.page Catalog.products

    /// The three node renderers on a tree built once: the walk and the encoding alone.
    [<Benchmark>]
    member _.CatalogGiraffeTreeBuilt() = (RenderView.AsBytes.htmlDocument catalogTree).Length

    [<Benchmark>]
    member _.CatalogSwoopBaselineTreeBuilt() =
        buffer.ResetWrittenCount()
        BaselineHtmlWriter.document buffer catalogTree
        written ()

    [<Benchmark>]
    member _.CatalogSwoopNodesTreeBuilt() =
        buffer.ResetWrittenCount()
        HtmlWriter.document buffer catalogTree
        written ()

    [<Benchmark>]
    member _.CatalogGiraffe() =
        (RenderView.AsBytes.htmlDocument (Catalog.page Catalog.products)).Length

    [<Benchmark>]
    member _.CatalogSwoopBaseline() =
        buffer.ResetWrittenCount()
        BaselineHtmlWriter.document buffer (Catalog.page Catalog.products)
        written ()

    [<Benchmark>]
    member _.CatalogSwoopNodes() =
        buffer.ResetWrittenCount()
        HtmlWriter.document buffer (Catalog.page Catalog.products)
        written ()

    [<Benchmark>]
    member _.CatalogSwoopTemplate() =
        buffer.ResetWrittenCount()
        Template.writeTo buffer CatalogTemplate.page Catalog.products
        written ()

    /// The page of issue 43 (item 9): the catalogue with 100 products as a view moved from
    /// Giraffe writes it, the tree built per page; then its tree alone, and the two renderers
    /// on a tree built once.
    [<Benchmark>]
    member _.Catalog100Giraffe() =
        (RenderView.AsBytes.htmlDocument (Catalog.page Catalog.products100)).Length

    [<Benchmark>]
    member _.Catalog100SwoopNodes() =
        buffer.ResetWrittenCount()
        HtmlWriter.document buffer (Catalog.page Catalog.products100)
        written ()

    [<Benchmark>]
    member _.Catalog100TreeOnly() = Catalog.page Catalog.products100

    [<Benchmark>]
    member _.Catalog100GiraffeTreeBuilt() = (RenderView.AsBytes.htmlDocument catalog100Tree).Length

    [<Benchmark>]
    member _.Catalog100SwoopNodesTreeBuilt() =
        buffer.ResetWrittenCount()
        HtmlWriter.document buffer catalog100Tree
        written ()

    [<Benchmark>]
    member _.TableGiraffe() =
        (RenderView.AsBytes.htmlDocument (TablePage.page TablePage.orders)).Length

    [<Benchmark>]
    member _.TableSwoopBaseline() =
        buffer.ResetWrittenCount()
        BaselineHtmlWriter.document buffer (TablePage.page TablePage.orders)
        written ()

    [<Benchmark>]
    member _.TableSwoopNodes() =
        buffer.ResetWrittenCount()
        HtmlWriter.document buffer (TablePage.page TablePage.orders)
        written ()

    [<Benchmark>]
    member _.TableSwoopTemplate() =
        buffer.ResetWrittenCount()
        Template.writeTo buffer TablePage.template TablePage.orders
        written ()
