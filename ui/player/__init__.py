"""The in-browser player and the take-home page: `take_home` (one HTML file that steps
through a decoding offline, and its command line `python -m ui.player.take_home`),
`in_browser` (the same player inside the app as a components-v2 component) and the
player's own HTML, CSS and JavaScript beside them."""
