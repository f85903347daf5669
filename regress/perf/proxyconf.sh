# shellcheck shell=sh disable=SC2154
# Configurations of the proxies the benchmarks start, shared by bench.sh
# and instructions.sh (sourced).  Each writes to $work; the TLS ones
# listen on 127.0.0.1 port $LS and forward to the HTTP backend on port
# $HTTPB with $WORKERS workers, with the key pair bench-KEY (ec or rsa)
# of tls_keys.

# nginx.conf's main context
nginx_head()
{
	mod=/usr/lib/nginx/modules/ngx_stream_module.so
	[ -f $mod ] && echo "load_module $mod;"
	printf '%s\n' "worker_processes $WORKERS;" \
	    "worker_rlimit_nofile 100000;" "pid $work/nginx.pid;" \
	    "error_log $work/nginx.err;" \
	    "events { worker_connections 50000; }"
}

# An ECDSA P-256 and an RSA 2048 key pair, bench-ec and bench-rsa, in
# $work/ssl (NAME.crt, private/NAME.key, and NAME.pem, both in one)
tls_keys()
{
	mkdir -p "$work/ssl/private"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$work/ssl/private/bench-ec.key" \
	    -out "$work/ssl/bench-ec.crt" -days 2 -subj /CN=127.0.0.1 \
	    2>/dev/null || return 1
	openssl req -x509 -newkey rsa:2048 -nodes \
	    -keyout "$work/ssl/private/bench-rsa.key" \
	    -out "$work/ssl/bench-rsa.crt" -days 2 -subj /CN=127.0.0.1 \
	    2>/dev/null || return 1
	for k in ec rsa; do
		cat "$work/ssl/bench-$k.crt" "$work/ssl/private/bench-$k.key" \
		    >"$work/ssl/bench-$k.pem"
	done
}

# tls_relayd_conf KEY: a tcp relay that terminates TLS, keys in ca
tls_relayd_conf()
{
	cat >"$work/relayd.conf" <<CONF
prefork $WORKERS
socket "$work/relayd.sock"
tls directory "$work/ssl"
protocol t {
	tcp { nodelay, backlog 512 }
	tls keypair bench-$1
	tls session tickets
}
relay t {
	listen on 127.0.0.1 port $LS tls
	protocol t
	forward to 127.0.0.1 port $HTTPB
}
CONF
	chmod 600 "$work/relayd.conf"
}

# tls_haproxy_conf KEY: mode tcp, bind ... ssl crt
tls_haproxy_conf()
{
	cat >"$work/haproxy.cfg" <<CONF
global
	nbthread $WORKERS
	maxconn 1000
	tune.ssl.default-dh-param 2048
defaults
	mode tcp
	timeout connect 5s
	timeout client 600s
	timeout server 600s
frontend t
	bind 127.0.0.1:$LS ssl crt $work/ssl/bench-$1.pem
	default_backend b
backend b
	server s 127.0.0.1:$HTTPB
CONF
}

# tls_nginx_conf KEY: stream, listen ... ssl
tls_nginx_conf()
{
	cat >"$work/nginx.conf" <<CONF
$(nginx_head)
stream {
	server {
		listen 127.0.0.1:$LS ssl;
		ssl_certificate $work/ssl/bench-$1.crt;
		ssl_certificate_key $work/ssl/private/bench-$1.key;
		ssl_protocols TLSv1.2 TLSv1.3;
		proxy_pass 127.0.0.1:$HTTPB;
	}
}
CONF
}
