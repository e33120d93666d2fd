"""The operations of both interfaces, free of HTTP: their declarations (what an operation takes,
answers and needs), the call objects their handlers receive, and the handlers. The HTTP faces
(`api/`) and the dashboard (`web/`) call in here; operations call the domain."""
