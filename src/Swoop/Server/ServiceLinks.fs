/// What the platform puts in a process's environment that is not Swoop's: Kubernetes's
/// service-link variables, recognised so that SWOOP_ configuration can skip them.
namespace Swoop

open System

/// The variables Kubernetes gives every pod for each Service (`enableServiceLinks`, on by
/// default): for a Service `swoop-api`, SWOOP_API_SERVICE_HOST, SWOOP_API_SERVICE_PORT(_NAME),
/// SWOOP_API_PORT=tcp://10.96.0.12:80, SWOOP_API_PORT_80_TCP(_PROTO, _PORT, _ADDR).
module internal ServiceLinks =
    // Plain matchers, not Regex: a Regex would bring its engine into every native AOT app and
    // build itself at start-up (idle memory), for four fixed shapes.
    let private isNameChar (c: char) = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c = '_'
    let private isNameText (s: string) = s.Length > 0 && s |> Seq.forall isNameChar
    let private isDigits (s: string) = s.Length > 0 && s |> Seq.forall Char.IsAsciiDigit

    /// NAME_SERVICE_HOST, NAME_SERVICE_PORT, NAME_SERVICE_PORT_<name>.
    let private isHostOrPort (name: string) =
        let at = name.LastIndexOf("_SERVICE_", StringComparison.Ordinal)

        at > 0
        && isNameText (name.Substring(0, at))
        && (let rest = name.Substring(at + 9)
            rest = "HOST" || rest = "PORT" || (rest.StartsWith("PORT_", StringComparison.Ordinal) && isNameText (rest.Substring 5)))

    /// NAME_PORT_<n>_<TCP|UDP|SCTP>, optionally followed by _PROTO, _PORT or _ADDR.
    let private isPortProto (name: string) =
        let parts = name.Split '_'
        let protocol (p: string) = p = "TCP" || p = "UDP" || p = "SCTP"
        let suffix (p: string) = p = "PROTO" || p = "PORT" || p = "ADDR"
        let n = parts.Length

        // ... PORT <digits> PROTOCOL [SUFFIX], after a non-empty name.
        let shaped (tail: int) =
            let p = n - tail
            p >= 4 && parts[p - 3] = "PORT" && isDigits parts[p - 2] && protocol parts[p - 1]
            && isNameText (String.Join("_", parts, 0, p - 3))

        (n >= 4 && shaped 0) || (n >= 5 && suffix parts[n - 1] && shaped 1)

    /// NAME_PORT.
    let private isPortName (name: string) =
        name.EndsWith("_PORT", StringComparison.Ordinal) && isNameText (name.Substring(0, name.Length - 5))

    /// A link's address: tcp://, udp:// or sctp://; never an option's value.
    let isAddress (value: string) =
        not (isNull value)
        && (value.StartsWith("tcp://", StringComparison.Ordinal)
            || value.StartsWith("udp://", StringComparison.Ordinal)
            || value.StartsWith("sctp://", StringComparison.Ordinal))

    /// Whether `name`=`value` has a service link's shape. `*_PORT` only with a link's address
    /// for value: SWOOP_PORT=8080 is the port option, SWOOP_PORT=tcp://... a link.
    let isLink (name: string) (value: string) =
        isHostOrPort name || isPortProto name || (isPortName name && isAddress value)
