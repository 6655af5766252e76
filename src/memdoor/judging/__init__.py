"""Running code on tests: which program runs on which tests (``programs``) and the
asynchronous judge within the sandbox slots (``judge``)."""
