// The text of /ui/page.css, compiled into the daemon: the page needs no files beside the binary.

extension WebPageAsset {
    /// The page's style sheet, with the marks of inserted, moved, updated and removed rows.
    static let style = WebPageAsset(
        path: "/ui/page.css", contentType: "text/css; charset=utf-8",
        text: #"""
            :root {
              color-scheme: light dark;
              --accent: #2f6fdb;
              --inserted: #3fb95055;
              --updated: #e3b34155;
              --moved: #2f6fdb44;
              --removed: #e5534b55;
              font-family: system-ui, sans-serif;
            }
            body { margin: 1.5rem; }
            header { display: flex; align-items: baseline; gap: 1.25rem; }
            h1 { margin: 0; font-size: 1.4rem; }
            .state::before { content: "●"; margin-right: 0.3em; color: gray; }
            .state[data-state="live"]::before { color: #3fb950; }
            .state[data-state="connecting"]::before, .state[data-state="reconnecting"]::before { color: #e3b341; }
            .state[data-state="failed"]::before { color: #e5534b; }
            #seq { font-variant-numeric: tabular-nums; font-weight: 600; }
            form { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: end; margin: 1rem 0; }
            label { display: flex; flex-direction: column; font-size: 0.85rem; gap: 0.2rem; }
            label.query { flex: 1 1 20rem; }
            input, select, button { font: inherit; padding: 0.3rem 0.5rem; }
            #query { font-family: ui-monospace, monospace; }
            #message { color: #e5534b; white-space: pre-wrap; font-family: ui-monospace, monospace; }
            .time { display: flex; align-items: center; gap: 0.75rem; margin-bottom: 1rem; }
            #slider { flex: 1; }
            table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
            th, td { text-align: left; padding: 0.25rem 0.6rem; border-bottom: 1px solid #8884; }
            th { position: sticky; top: 0; background: Canvas; }
            table.past { opacity: 0.8; }
            table.past tbody { font-style: italic; }
            @keyframes rill-inserted { from { background: var(--inserted); } }
            @keyframes rill-updated { from { background: var(--updated); } }
            @keyframes rill-moved { from { background: var(--moved); } }
            @keyframes rill-removed { from { background: var(--removed); opacity: 1; } to { opacity: 0; } }
            tr.rill-inserted { animation: rill-inserted 1.2s ease-out; }
            tr.rill-updated { animation: rill-updated 1.2s ease-out; }
            tr.rill-moved { animation: rill-moved 1.2s ease-out; }
            tr.rill-removed { animation: rill-removed 0.8s ease-in forwards; text-decoration: line-through; }
            #count { color: gray; font-size: 0.85rem; }
            """#)
}
