// The text of /, compiled into the daemon: the page needs no files beside the binary.

extension WebPageAsset {
    /// The page itself, served at `/`: the form, the connection's state, the slider and the table.
    static let page = WebPageAsset(
        path: "/", contentType: "text/html; charset=utf-8",
        text: #"""
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>Rill</title>
            <link rel="stylesheet" href="/ui/page.css">
            <link rel="icon" href="/ui/icon.svg" type="image/svg+xml">
            <script type="module" src="/ui/page.js"></script>
            </head>
            <body>
            <header>
              <h1>Rill</h1>
              <span id="state" class="state" data-state="closed">not connected</span>
              <span class="seq">commit <output id="seq">–</output></span>
            </header>
            <form id="form">
              <label>Entity <select id="entity"></select></label>
              <label class="query">Query
                <input id="query" placeholder="where … sort by … limit …" autocomplete="off" spellcheck="false">
              </label>
              <label>Token <input id="token" type="password" autocomplete="off" placeholder="when the daemon asks"></label>
              <button type="submit">Subscribe</button>
            </form>
            <p id="message" role="alert" hidden></p>
            <section class="time">
              <input id="slider" type="range" min="0" max="0" value="0" step="1" disabled aria-label="Commit">
              <output id="when">live</output>
            </section>
            <table id="results"><thead><tr></tr></thead><tbody></tbody></table>
            <p id="count"></p>
            </body>
            </html>
            """#)
}
