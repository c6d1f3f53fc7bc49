"""ShredBench sample synthesis: render → Voronoi cut → pieces → scraps → sample folder."""
