/// The handshake's pure parts: the accept value, keys, subprotocols and deflate offers.
module Swoop.Tests.HandshakeTests

open Xunit
open Swoop.Live

[<Fact>]
let ``the accept value is the RFC's example`` () =
    Assert.Equal("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", Handshake.acceptFor "dGhlIHNhbXBsZSBub25jZQ==")

[<Theory>]
[<InlineData("dGhlIHNhbXBsZSBub25jZQ==", true)>]
[<InlineData("dGhlIHNhbXBsZSBub25jZQ", false)>]
[<InlineData("dGhlIHNhbXBsZSBub25jZQ==x", false)>]
[<InlineData("AAAAAAAAAAAAAAAAAAAAAAAA", false)>]
[<InlineData("not base64 at all!!!!!!!", false)>]
let ``a key is 16 bytes in base64`` (key: string, valid: bool) = Assert.Equal(valid, Handshake.validKey key)

[<Fact>]
let ``the server's preference picks the subprotocol, and none is null`` () =
    Assert.Equal("b", Handshake.chooseProtocol [ "b"; "a" ] [ "a"; "b" ])
    Assert.Null(Handshake.chooseProtocol [ "b" ] [ "a" ])
    Assert.Null(Handshake.chooseProtocol [] [ "a" ])

let deflateHeader (offers: string list) =
    Handshake.negotiateDeflate offers |> Option.map fst

[<Fact>]
let ``deflate offers: accepted with server_no_context_takeover, limits honoured, bad offers passed over`` () =
    Assert.Equal(Some "permessage-deflate; server_no_context_takeover", deflateHeader [ "permessage-deflate; client_max_window_bits" ])
    Assert.Equal(Some "permessage-deflate; server_no_context_takeover; server_max_window_bits=10", deflateHeader [ "permessage-deflate; server_max_window_bits=10" ])
    // Offered at 15, it is still answered (RFC 7692, 7.1.2.1: a client may fail without it).
    Assert.Equal(Some "permessage-deflate; server_no_context_takeover; server_max_window_bits=15", deflateHeader [ "permessage-deflate; server_max_window_bits=15" ])
    Assert.Equal(Some "permessage-deflate; server_no_context_takeover; client_no_context_takeover", deflateHeader [ "permessage-deflate; client_no_context_takeover" ])
    // An unknown parameter, a window the base library cannot keep, a repeated parameter: the next offer.
    Assert.Equal(None, deflateHeader [ "permessage-deflate; colour=blue" ])
    Assert.Equal(None, deflateHeader [ "permessage-deflate; server_max_window_bits=8" ])
    Assert.Equal(None, deflateHeader [ "permessage-deflate; client_no_context_takeover; client_no_context_takeover" ])
    Assert.Equal(Some "permessage-deflate; server_no_context_takeover", deflateHeader [ "permessage-deflate; server_max_window_bits=8, permessage-deflate" ])
    Assert.Equal(None, deflateHeader [ "x-webkit-deflate-frame" ])
    Assert.Equal(None, deflateHeader [])

[<Fact>]
let ``the options follow the answer`` () =
    let _, options = (Handshake.negotiateDeflate [ "permessage-deflate; server_max_window_bits=12; client_no_context_takeover" ]).Value
    Assert.Equal(12, options.ServerMaxWindowBits)
    Assert.False(options.ServerContextTakeover)
    Assert.False(options.ClientContextTakeover)
