/// Feature switches a native AOT app may set to leave whole protocols out of its executable:
/// the trimmer reads a switch set in the app's project as a constant, and drops the code it
/// guards. A plain-HTTP service then carries neither TLS (SslStream and the certificate code
/// behind it) nor HTTP/2 (framing, HPACK, flow control):
///
/// ```xml
/// <ItemGroup>
///   <RuntimeHostConfigurationOption Include="Swoop.Tls.IsSupported" Value="false" Trim="true" />
///   <RuntimeHostConfigurationOption Include="Swoop.Http2.IsSupported" Value="false" Trim="true" />
/// </ItemGroup>
/// ```
///
/// Unset, both are supported. With TLS left out an HTTPS endpoint is refused when the server
/// starts (an ArgumentException naming the switch); with HTTP/2 left out the server speaks
/// HTTP/1.1 only (no h2c, no ALPN "h2"), and `Http2 = Only` is refused.
namespace Swoop

open System
open System.Diagnostics.CodeAnalysis
open System.Runtime.CompilerServices

/// A switch's value as the app set it (unset: on), read each time: AppContext's switches
/// are the process's, and a test may change one.
module internal FeatureSwitch =
    let enabled (name: string) =
        match AppContext.TryGetSwitch name with
        | true, on -> on
        | _ -> true

[<AbstractClass; Sealed>]
type internal Features =
    // Not inlined (F# inlines small members into their callers): the trimmer recognises a
    // switch by the call to its property's getter. Read once a connection, never a request.

    /// HTTPS endpoints (TLS).
    [<FeatureSwitchDefinition("Swoop.Tls.IsSupported")>]
    static member Tls
        with [<MethodImpl(MethodImplOptions.NoInlining)>] get () = FeatureSwitch.enabled "Swoop.Tls.IsSupported"

    /// HTTP/2 (h2c by prior knowledge, and "h2" over TLS).
    [<FeatureSwitchDefinition("Swoop.Http2.IsSupported")>]
    static member Http2
        with [<MethodImpl(MethodImplOptions.NoInlining)>] get () = FeatureSwitch.enabled "Swoop.Http2.IsSupported"
