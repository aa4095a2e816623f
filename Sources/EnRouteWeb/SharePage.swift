/// The share-tracking page: steps, ETA (with the stops before a delivery), the provider's first name and the pin over
/// the road map, fed by `/share/{token}/events`. Every wording arrives from the server; the page only draws it.
enum SharePage {
    static let style = """
        body{font-family:system-ui,sans-serif;margin:0;color:#222} header{padding:12px \
        16px;background:#0b7a75;color:#fff}
        h1{font-size:20px;margin:0} #eta{font-size:18px;margin:4px 0 0} #stops{margin:2px 0 0}
        main{display:flex;flex-wrap:wrap}
        #panel{flex:1 1 260px;padding:12px 16px} #map{flex:3 1 480px;height:78vh;min-height:360px}
        ol{padding-left:20px} li.done{color:#0b7a75} li.current{font-weight:bold} li.upcoming{color:#999}
        #banner{color:#b00;font-weight:bold} #pin-label{color:#666} .missing{padding:20px;color:#b00}
        #conn{color:#666;font-size:13px}
        """

    static func html(title: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" \
        content="width=device-width,initial-scale=1">
        <title>\(WebSurfaces.escape(title)) · EnRoute</title>\(MapScript.head)<style>\(style)</style></head>
        <body data-pin="hidden" data-map="loading"><header><h1 id="title">\(WebSurfaces.escape(title))</h1><p \
        id="eta"></p><p id="stops"></p></header>
        <main><section id="panel"><p id="provider"></p><p id="banner"></p><ol id="steps"></ol><p id="pin-label"></p><p \
        id="conn"></p></section>
        <div id="map"></div></main>
        <script>
        \(MapScript.js)
        let pin = null, ends = [];
        const map = makeMap('map');
        window.enrouteShare = {events: 0, state: null};
        function render(s) {
          window.enrouteShare.state = s; window.enrouteShare.events += 1;
          document.getElementById('title').textContent = s.title;
          document.getElementById('eta').textContent = s.eta;
          document.getElementById('stops').textContent = s.stopsBefore || '';
          document.getElementById('provider').textContent = s.provider ? (s.kind === 'ride' ? 'Your driver: ' : 'Your \
        courier: ') + s.provider : '';
          document.getElementById('banner').textContent = s.banner || '';
          const ol = document.getElementById('steps'); ol.innerHTML = '';
          for (const step of s.steps) { const li = document.createElement('li'); li.textContent = step.title; \
        li.className = step.progress; ol.appendChild(li); }
          document.getElementById('pin-label').textContent = s.pin.label || '';
          document.body.dataset.pin = s.pin.state;
          if (!map) return;
          if (ends.length === 0) {
            ends = [L.circleMarker([s.pickup.lat, s.pickup.lng], {radius: 6, color: '#555', fillOpacity: \
        0.6}).addTo(map),
                    L.circleMarker([s.destination.lat, s.destination.lng], {radius: 8, color: '#0b7a75', fillOpacity: \
        0.8}).addTo(map).bindTooltip('Destination')];
            map.setView([s.destination.lat, s.destination.lng], 15);
          }
          if (s.pin.state === 'hidden') { if (pin) { pin.remove(); pin = null; } return; }
          const at = [s.pin.lat, s.pin.lng];
          if (!pin) pin = L.circleMarker(at, {radius: 9, color: '#1e5bd8', weight: 3}).addTo(map); else \
        pin.setLatLng(at);
          const live = s.pin.state === 'live';
          pin.setStyle({opacity: live ? 1 : 0.35, fillOpacity: live ? 0.9 : 0.25});
        }
        const events = new EventSource(location.pathname + '/events');
        events.addEventListener('share', e => { document.getElementById('conn').textContent = ''; \
        render(JSON.parse(e.data)); });
        events.addEventListener('closed', () => { events.close(); location.reload(); });
        events.onerror = () => {
          document.getElementById('conn').textContent = 'Reconnecting…';
          if (events.readyState === EventSource.CLOSED) fetch(location.pathname + '/state').then(r => { if (r.status \
        === 410 || r.status === 404) location.reload(); });
        };
        </script></body></html>
        """
    }

    /// The page for a link that no longer opens: ended, turned off, or not valid.
    static func gone(_ heading: String, _ detail: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" \
        content="width=device-width,initial-scale=1">
        <title>\(WebSurfaces.escape(heading)) · EnRoute</title><style>\(style) main{display:block;padding:24px \
        16px}</style></head>
        <body data-page="gone"><header><h1 id="title">\(WebSurfaces.escape(heading))</h1></header>
        <main><p>\(WebSurfaces.escape(detail))</p><p>Nothing else of the trip is shown here.</p></main></body></html>
        """
    }
}
