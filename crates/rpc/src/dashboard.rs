//! The node's dashboard page, served at `GET /` of the HTTP port to browsers: health (the three
//! checks, live over the WebSocket port) and a fee panel (a sender's Karma and the quote of
//! `l2_estimateGas`). One self-contained HTML file embedded in the binary: no CDN, works
//! offline; it talks JSON-RPC to the same origin.

/// The page source; `__L2NODE_WS_PORT__` is replaced by the WebSocket port.
const PAGE: &str = include_str!("../dashboard/index.html");

/// The page for a node whose WebSocket server listens on `ws_port` (`None`: the page polls).
pub(crate) fn page(ws_port: Option<u16>) -> String {
    PAGE.replace(
        "__L2NODE_WS_PORT__",
        &ws_port.map(|p| p.to_string()).unwrap_or_default(),
    )
}

/// Whether a request asks for HTML (a browser navigating to the node), by its `Accept` header.
pub(crate) fn wants_html(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/html"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_is_self_contained_and_names_the_ws_port() {
        let html = page(Some(8546));
        assert!(html.contains(r#"content="8546""#));
        for external in ["http://", "https://cdn", "<script src", "<link"] {
            assert!(!html.contains(external), "{external}");
        }
        assert!(page(None).contains(r#"content="""#));
    }
}
