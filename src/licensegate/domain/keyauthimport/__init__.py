"""Moving an application from KeyAuth: its data read from a source (a mysqldump, a live MySQL or
MariaDB server, a live application's seller API, or the dashboard's export files) as KeyAuth's own
rows (`records`), then written into licensegate with KeyAuth's meanings kept."""
