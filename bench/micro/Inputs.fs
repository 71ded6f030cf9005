/// The request bytes every parser benchmark gets, identical for each parser.
module Swoop.Benchmarks.Inputs

open System.Text

let private ascii (s: string) = Encoding.ASCII.GetBytes s

/// A short GET, as wrk sends it.
let shortGet = ascii "GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"

/// A browser-like GET with 12 headers.
let browserGet =
    ascii (
        "GET /products/42/reviews?page=2&sort=newest HTTP/1.1\r\n"
        + "Host: shop.example.com\r\n"
        + "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n"
        + "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
        + "Accept-Language: en-GB,en;q=0.7,fr;q=0.3\r\n"
        + "Accept-Encoding: gzip, deflate, br, zstd\r\n"
        + "Referer: https://shop.example.com/products/42\r\n"
        + "Connection: keep-alive\r\n"
        + "Cookie: session=8f14e45fceea167a5a36dedd4bea2543; theme=dark; consent=1\r\n"
        + "Upgrade-Insecure-Requests: 1\r\n"
        + "Sec-Fetch-Dest: document\r\n"
        + "Sec-Fetch-Mode: navigate\r\n"
        + "Cache-Control: max-age=0\r\n"
        + "\r\n"
    )

/// 16 short GETs back to back, as one pipelined read delivers them.
let pipelined16 = Array.concat (Array.replicate 16 shortGet)

let byName =
    function
    | "short" -> shortGet, 1
    | "browser" -> browserGet, 1
    | "pipelined16" -> pipelined16, 16
    | other -> failwithf "unknown input %s" other
