"""An Iceberg REST catalog server over a TrinityLake lakehouse (`trinityfs serve`).

Every Iceberg engine that speaks the REST catalog protocol (Spark, Trino, Flink, DuckDB,
PyIceberg) reaches the lakehouse through it. The server holds no state: the lakehouse on
storage is the only truth, and any number of servers can serve one lakehouse. The
warehouse `v/<n>`, `v/<export>` or `v/<ISO time>` reads the whole catalog as it was at
that version (read-only). Needs the `rest` extra (`pip install 'trinityfs[rest]'`).

    from trinityfs.rest.server import ServerConfig, ServerThread, serve
    serve(ServerConfig(root="./lake", port=8181))          # blocks
    with ServerThread(ServerConfig(root="./lake", port=0)) as server:
        ...  # server.url

Modules: options (configuration, flags), server (running it), app (HTTP routes),
service / tables (the operations), selector (time travel), locations (confinement),
security (tokens), requests (parsing), errors (the spec's error model), cache.
"""
