#!/bin/sh
# A stand-in for dumb-init: the program runs as the container's only process.
exec "$@"
