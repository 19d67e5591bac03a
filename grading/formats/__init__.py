"""Data formats, each declared once (``registry``): one module per format that a project is
imported from or exported to. The command line, the browser upload and the API read the
declarations; see ``registry`` for how a format is declared."""
