#!/bin/sh
# The redis image's entrypoint (redis.Containerfile): clients in other containers are accepted
# without a password, as the official image does (it builds Redis with protected mode off;
# Debian's binary has it on). The flag goes last, after a configuration file if one is given;
# a lone --version or --help is left alone (Redis reads those only as its sole argument).
if [ "$1" = redis-server ]; then
  case "${2-}" in
    -v | --version | -h | --help) ;;
    *)
      shift
      set -- redis-server "$@" --protected-mode no
      ;;
  esac
fi
exec "$@"
