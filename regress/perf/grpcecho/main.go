// grpcecho: make bench's gRPC server, in Go with grpc-go, the gRPC
// implementation most servers run.  Its one call, t.T/Echo, sends the
// request's message back as it came (the bytes are not decoded), as
// regress/tools/grpctool.py's Echo does.  It listens on 127.0.0.1, on
// a port of the kernel's choosing, and writes that port to PORTFILE.
//
//	grpcecho PORTFILE [SECONDS]
//
// It exits after SECONDS (a day by default).
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
)

// rawCodec hands the messages over as bytes.  It takes the name of the
// protobuf codec, which the clients name in their content-type.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) {
	return *(v.(*[]byte)), nil
}

func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}

func (rawCodec) Name() string {
	return "proto"
}

func echo(_ interface{}, _ context.Context, dec func(interface{}) error,
	_ grpc.UnaryServerInterceptor) (interface{}, error) {
	var msg []byte

	if err := dec(&msg); err != nil {
		return nil, err
	}
	return &msg, nil
}

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: grpcecho PORTFILE [SECONDS]")
		os.Exit(1)
	}
	secs := 86400
	if len(os.Args) == 3 {
		n, err := strconv.Atoi(os.Args[2])
		if err != nil || n <= 0 {
			fmt.Fprintln(os.Stderr, "grpcecho: bad SECONDS")
			os.Exit(1)
		}
		secs = n
	}
	encoding.RegisterCodec(rawCodec{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpcecho:", err)
		os.Exit(1)
	}
	// the port file appears whole: written aside, then renamed
	port := fmt.Sprintf("%d\n", l.Addr().(*net.TCPAddr).Port)
	tmp := os.Args[1] + ".tmp"
	if err := os.WriteFile(tmp, []byte(port), 0644); err != nil {
		fmt.Fprintln(os.Stderr, "grpcecho:", err)
		os.Exit(1)
	}
	if err := os.Rename(tmp, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "grpcecho:", err)
		os.Exit(1)
	}
	time.AfterFunc(time.Duration(secs)*time.Second, func() { os.Exit(0) })
	s := grpc.NewServer()
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "t.T",
		HandlerType: (*interface{})(nil),
		Methods: []grpc.MethodDesc{
			{MethodName: "Echo", Handler: echo},
		},
	}, struct{}{})
	if err := s.Serve(l); err != nil {
		fmt.Fprintln(os.Stderr, "grpcecho:", err)
		os.Exit(1)
	}
}
