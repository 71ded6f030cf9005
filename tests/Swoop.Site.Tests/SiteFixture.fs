/// One Site and one browser for all the tests: the Site in-process on a free port, Chromium
/// headless through Playwright (each test opens its own browser context: its own cookies).
namespace Site.Tests

open System
open System.IO
open System.Threading.Tasks
open Microsoft.Playwright
open Swoop
open Swoop.Web
open Swoop.Site
open Xunit

type SiteFixture() =
    let mutable server: RunningServer = Unchecked.defaultof<_>
    let mutable playwright: IPlaywright = null
    let mutable browser: IBrowser = null

    /// A self-signed certificate for localhost and 127.0.0.1, as PEM files: (cert, key).
    static member Certificate() =
        let folder = Path.Combine(Path.GetTempPath(), "swoop-site-" + Guid.NewGuid().ToString("N"))
        Directory.CreateDirectory folder |> ignore
        use key = Security.Cryptography.ECDsa.Create(Security.Cryptography.ECCurve.NamedCurves.nistP256)
        let request = Security.Cryptography.X509Certificates.CertificateRequest("CN=localhost", key, Security.Cryptography.HashAlgorithmName.SHA256)
        let san = Security.Cryptography.X509Certificates.SubjectAlternativeNameBuilder()
        san.AddDnsName "localhost"
        san.AddIpAddress Net.IPAddress.Loopback
        request.CertificateExtensions.Add(san.Build())
        use cert = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays -1.0, DateTimeOffset.UtcNow.AddDays 30.0)
        let certPath, keyPath = Path.Combine(folder, "cert.pem"), Path.Combine(folder, "key.pem")
        File.WriteAllText(certPath, cert.ExportCertificatePem())
        File.WriteAllText(keyPath, key.ExportPkcs8PrivateKeyPem())
        certPath, keyPath

    /// The Site's address, e.g. http://127.0.0.1:40123.
    member _.BaseUrl = sprintf "http://127.0.0.1:%d" server.Port
    /// Its https:// address (the same app; HTTP/2 by ALPN).
    member _.HttpsUrl = server.Urls |> List.find (fun u -> u.StartsWith "https://")
    member _.Browser = browser

    /// How long a page action or navigation may take (ms): generous, since CI machines are shared
    /// and a loaded one has taken over 10 s to load a page that loads in well under one here.
    static member ActionTimeout = 30_000f

    /// A fresh browser context on the Site's https:// endpoint (its certificate self-signed).
    member this.NewHttpsPageAsync() =
        task {
            let! context =
                browser.NewContextAsync(BrowserNewContextOptions(BaseURL = this.HttpsUrl, IgnoreHTTPSErrors = true, ViewportSize = ViewportSize(Width = 1000, Height = 900)))

            context.SetDefaultTimeout SiteFixture.ActionTimeout
            let! page = context.NewPageAsync()
            return page
        }

    /// A fresh browser context (no cookies) on the Site, with a page.
    member this.NewPageAsync() =
        task {
            let! context = browser.NewContextAsync(BrowserNewContextOptions(BaseURL = this.BaseUrl, ViewportSize = ViewportSize(Width = 1000, Height = 900)))
            context.SetDefaultTimeout SiteFixture.ActionTimeout
            let! page = context.NewPageAsync()
            return page
        }

    interface IAsyncLifetime with
        member _.InitializeAsync() =
            task {
                let settings: global.Site.App.Settings =
                    { WebRoot = Path.Combine(AppContext.BaseDirectory, "wwwroot")
                      Keys = KeyRing.ofBase64 [ KeyRing.newKey () ]
                      SecureCookies = false }

                let cert, key = SiteFixture.Certificate()

                let options =
                    { ServerOptions.defaults with
                        Listen = [ Endpoint.Tcp("127.0.0.1", 0); Endpoint.Https("127.0.0.1", 0) ]
                        TlsCert = [ cert ]
                        TlsKey = [ key ] }

                server <- Server.start options (Web.handler global.Site.App.webOptions (global.Site.App.create settings))
                eprintfn "site tests: the Site on port %d" server.Port
                let executable = Chromium.find ()
                eprintfn "site tests: Chromium at %s" executable
                let! pw = Playwright.CreateAsync().WaitAsync(TimeSpan.FromSeconds 30.0)
                playwright <- pw
                eprintfn "site tests: Playwright's driver started"
                let! launched =
                    playwright.Chromium.LaunchAsync(
                        BrowserTypeLaunchOptions(ExecutablePath = executable, Headless = true, Args = Chromium.args, Timeout = 30_000f)
                    )
                browser <- launched
                eprintfn "site tests: Chromium %s launched" launched.Version
            }

        member _.DisposeAsync() =
            task {
                // Bounded, so that a stuck browser fails the run instead of hanging it.
                if not (isNull browser) then do! browser.CloseAsync().WaitAsync(TimeSpan.FromSeconds 15.0)
                if not (isNull playwright) then playwright.Dispose()
                if not (obj.ReferenceEquals(server, null)) then do! server.StopAsync().WaitAsync(TimeSpan.FromSeconds 15.0)
            }

[<CollectionDefinition("site")>]
type SiteCollection() =
    interface ICollectionFixture<SiteFixture>
