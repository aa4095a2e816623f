/// The map every page draws: Leaflet (served by this server) over the city's roads from `/map/roads.geojson`,
/// styled by road class, with the OpenStreetMap attribution. No tile server, no request off the machine.
enum MapScript {
    static let head = """
        <link rel="stylesheet" href="/assets/leaflet/leaflet.css">
        <script src="/assets/leaflet/leaflet.js"></script>
        """

    static let attribution = "© OpenStreetMap contributors, ODbL"

    static let js = """
        const ROAD_STYLE = {motorway:[5,'#c0392b'], trunk:[4.5,'#d35400'], primary:[4,'#e67e22'], \
        secondary:[3.5,'#f1c40f'],
          tertiary:[3,'#bdc3c7'], unclassified:[2,'#95a5a6'], residential:[2,'#95a5a6'], \
        living_street:[1.5,'#b2bec3'], service:[1,'#dfe6e9']};
        function roadStyle(f) { const c = f.properties.class.replace('_link',''); const s = ROAD_STYLE[c] || \
        [1.5,'#95a5a6'];
          return {weight: s[0], color: s[1], opacity: 0.9}; }
        function makeMap(id, onReady) {
          const box = document.getElementById(id);
          if (typeof L === 'undefined') {
            box.innerHTML = '<p class="missing">The map needs Leaflet, which this server could not find: run \
        scripts/install-web.sh (or start the server with --leaflet-dir DIR).</p>';
            document.body.dataset.map = 'missing'; return null;
          }
          const map = L.map(id, {zoomControl: true, attributionControl: true, preferCanvas: true});
          map.attributionControl.setPrefix(false);
          map.attributionControl.addAttribution('\(attribution)');
          map.setView([0, 0], 2);
          fetch('/map/roads.geojson').then(r => r.ok ? r.json() : null).then(g => {
            if (g) { const layer = L.geoJSON(g, {style: roadStyle, interactive: false}).addTo(map);
              if (g.bbox) map.fitBounds([[g.bbox[1], g.bbox[0]], [g.bbox[3], g.bbox[2]]]); }
            document.body.dataset.map = g ? 'roads' : 'no-roads';
            if (onReady) onReady(map, !!g);
          }).catch(() => { document.body.dataset.map = 'no-roads'; if (onReady) onReady(map, false); });
          return map;
        }
        """
}
