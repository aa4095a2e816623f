/// The operations console: the live city on the road map (online providers, active trips), counts by state, a search by
/// trip id and a trip's or provider's detail. The ops token comes in the address's fragment (`/ops#token=…`, never
/// sent to a server) or the form, stays in the tab's sessionStorage for the JSON calls, and buys the short-lived
/// cookie the live feed (`/ops/events`) needs, since a browser's EventSource cannot send headers.
enum ConsolePage {
    static let html = """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" \
        content="width=device-width,initial-scale=1">
        <title>EnRoute operations</title>\(MapScript.head)<style>
        body{font-family:system-ui,sans-serif;margin:0;color:#222;font-size:14px} header{padding:8px \
        14px;background:#263238;color:#fff;display:flex;gap:16px;align-items:center}
        h1{font-size:18px;margin:0} main{display:flex} #map{flex:3;height:86vh} aside{flex:2;padding:8px \
        12px;overflow:auto;height:86vh}
        table{border-collapse:collapse;width:100%} td,th{border-bottom:1px solid #eee;padding:2px \
        4px;text-align:left;font-size:12px}
        #login{padding:24px} .missing{padding:20px;color:#b00} #status{color:#9cf} tr.trip{cursor:pointer}
        </style></head>
        <body data-map="loading" data-feed="off"><header><h1>EnRoute operations</h1>
        <form id="search"><input id="trip-id" placeholder="Trip id" size="24"> <button>Find trip</button></form><span \
        id="status"></span></header>
        <div id="login" hidden><p>Paste an ops bearer token (<code>enroute token --role ops</code>):</p>
        <form id="login-form"><input id="token" size="60"> <button>Open console</button></form></div>
        <main id="console"><div id="map"></div><aside>
        <h2>Counts</h2><table id="counts"></table>
        <h2>Busy zones</h2><table id="zones"></table>
        <h2 id="detail-title">Detail</h2><div id="detail"><p>Search a trip id, or click a trip or a provider.</p></div>
        <h2>Active trips</h2><table id="trips"></table></aside></main>
        <script>
        \(MapScript.js)
        const fragment = new URLSearchParams(location.hash.slice(1));
        if (fragment.get('token')) { sessionStorage.setItem('opsToken', fragment.get('token')); \
        history.replaceState(null, '', location.pathname); }
        const token = () => sessionStorage.getItem('opsToken');
        const api = path => fetch(path, {headers: {Authorization: 'Bearer ' + token()}}).then(r => r.ok ? r.json() : \
        Promise.reject(r.status));
        const map = makeMap('map');
        const layers = map ? L.layerGroup().addTo(map) : null;
        let detailLayer = null;
        window.enrouteConsole = {overviews: 0, overview: null};
        function esc(s) { return String(s ?? '').replace(/[&<>"]/g, c => \
        ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c])); }
        function time(t) { return t ? new Date(t).toISOString().slice(11, 19) : ''; }
        function render(o) {
          window.enrouteConsole.overview = o; window.enrouteConsole.overviews += 1;
          document.getElementById('counts').innerHTML = Object.keys(o.counts).sort().map(k => \
        `<tr><td>${esc(k)}</td><td>${o.counts[k]}</td></tr>`).join('');
          document.getElementById('trips').innerHTML = \
        '<tr><th>trip</th><th>kind</th><th>state</th><th>provider</th></tr>' +
            o.trips.map(t => `<tr class="trip" \
        data-id="${esc(t.id)}"><td>${esc(t.id)}</td><td>${t.kind}</td><td>${esc(t.status)}${t.bookedFor ? \
        ' · booked for ' + time(t.bookedFor) : ''}</td><td>\
        ${esc(t.providerId)}</td></tr>`).join('');
          document.querySelectorAll('tr.trip').forEach(tr => tr.onclick = () => showTrip(tr.dataset.id));
          const busy = (o.zones || []).filter(z => z.multiplier > 1);
          document.getElementById('zones').innerHTML = busy.length ? \
        '<tr><th>zone</th><th>×</th><th>waiting</th><th>idle</th></tr>' + busy.slice(0, 20).map(z => \
        `<tr class="zone"><td>${esc(z.zone)}</td><td>${z.multiplier.toFixed(1)}</td><td>${z.open.toFixed(1)}</td>\
        <td>${z.idle.toFixed(1)}</td></tr>`).join('') : '<tr><td>none: every zone is calm</td></tr>';
          if (!layers) return;
          layers.clearLayers();
          for (const p of o.providers) if (p.lat != null) L.circleMarker([p.lat, p.lng], {radius: 4, color: p.busy ? \
        '#d35400' : '#1e5bd8', fillOpacity: 0.8})
            .addTo(layers).bindTooltip(p.id).on('click', () => showProvider(p.id));
          for (const t of o.trips) L.circleMarker([t.pickup.lat, t.pickup.lng], {radius: 3, color: '#8e44ad', \
        fillOpacity: 0.6}).addTo(layers)
            .bindTooltip(t.id + ' ' + t.status).on('click', () => showTrip(t.id));
          // Zones by busy-time multiplier: calm ones are not drawn; ×1.1 pale orange to ×2 deep red.
          for (const z of o.zones || []) if (z.multiplier > 1) L.circle([z.centre.lat, z.centre.lng], {radius: 500, \
        stroke: false, fillColor: zoneColour(z.multiplier), fillOpacity: 0.35}).addTo(layers)
            .bindTooltip(`zone ${z.zone} ×${z.multiplier.toFixed(1)}: ${z.open.toFixed(1)} waiting, \
        ${z.idle.toFixed(1)} idle`);
        }
        function zoneColour(m) { const k = Math.min(1, m - 1); \
        return `rgb(${230 - 50 * k},${150 - 150 * k},${60 - 60 * k})`; }
        function showTrip(id) {
          api('/v1/ops/trips/' + encodeURIComponent(id)).then(d => {
            document.getElementById('detail-title').textContent = 'Trip ' + d.trip.id;
            const rows = (list, f) => list.map(f).join('') || '<tr><td>none</td></tr>';
            document.getElementById('detail').innerHTML =
              `<p>${esc(d.trip.kind)} · ${esc(d.trip.status)} · v${d.trip.version} · customer ${esc(d.customerId)} · \
        provider ${esc(d.trip.providerId)}</p>` +
              `<p>Payment: ${d.payment ? esc(d.payment.state) + ' held ' + d.payment.heldMinor + ' captured ' + \
        d.payment.capturedMinor + ' ' + esc(d.payment.currency) : 'none'}</p>` +
              '<h3>Changes</h3><table><tr><th>v</th><th>state</th><th>by</th><th>server</th><th>device</th></tr>' +
              rows(d.changes, c => \
        `<tr><td>${c.version}</td><td>${esc(c.status)}</td><td>${esc(c.actor)}</td><td>${time(c.serverTime)}</td>\
        <td>${time(c.deviceTime)}</td></tr>`) + '</table>' +
              `<h3>Offers</h3><table>${rows(d.offers, e => \
        `<tr><td>${time(e.at)}</td><td>${esc(e.subject)}</td><td>${esc(e.detail)}</td></tr>`)}</table>` +
              `<h3>Pushes</h3><table>${rows(d.pushes, e => \
        `<tr><td>${time(e.at)}</td><td>${esc(e.subject)}</td><td>${esc(e.detail)}</td></tr>`)}</table>` +
              `<p>Path: ${d.path.length} fixes</p>`;
            if (map) { if (detailLayer) detailLayer.remove();
              detailLayer = L.polyline(d.path.map(p => [p.lat, p.lng]), {color: '#c0392b', weight: 4}).addTo(map); }
          }).catch(s => { document.getElementById('detail').innerHTML = `<p>No trip ${esc(id)} (${s}).</p>`; });
        }
        function showProvider(id) {
          api('/v1/ops/providers/' + encodeURIComponent(id) + '/activity').then(p => {
            document.getElementById('detail-title').textContent = 'Provider ' + p.id;
            document.getElementById('detail').innerHTML = `<p>${esc(p.name)} · ${p.online ? 'online' : 'offline'} · \
        position ${time(p.positionAt)} · trips ${esc(p.activeTrips.join(', ') || 'none')} · live offer \
        ${esc(p.liveOffer || 'none')}</p>`;
          });
        }
        document.getElementById('search').onsubmit = e => { e.preventDefault(); \
        showTrip(document.getElementById('trip-id').value.trim()); };
        document.getElementById('login-form').onsubmit = e => { e.preventDefault(); sessionStorage.setItem('opsToken', \
        document.getElementById('token').value.trim()); start(); };
        let feed = null;
        function start() {
          if (!token()) { document.getElementById('login').hidden = false; return; }
          document.getElementById('login').hidden = true;
          fetch('/ops/session', {method: 'POST', headers: {Authorization: 'Bearer ' + token()}}).then(r => {
            if (!r.ok) { document.getElementById('status').textContent = 'The ops token was refused (' + r.status + \
        ')'; sessionStorage.removeItem('opsToken');
              document.getElementById('login').hidden = false; return; }
            if (feed) feed.close();
            feed = new EventSource('/ops/events');
            feed.addEventListener('overview', e => { document.body.dataset.feed = 'live'; \
        document.getElementById('status').textContent = 'live'; render(JSON.parse(e.data)); });
            // The cookie lasts minutes: a feed the server closed for good gets a fresh cookie and starts again.
            feed.onerror = () => { document.getElementById('status').textContent = 'reconnecting…'; if \
        (feed.readyState === EventSource.CLOSED) setTimeout(start, 2000); };
          });
        }
        start();
        </script></body></html>
        """
}
