"""The dashboard's pages, one module per area; each exports `ROUTES`."""
