// cricleanup: minimal CRI client (no crictl on this machine's proxy). Usage:
//   cricleanup -endpoint unix:///path/containerd.sock [ps|pods|rmp]
//   rmp = StopPodSandbox + RemovePodSandbox for every sandbox (tears down CNI, stops containers)
//   (e2e/real-node/stop.sh runs rmp: crictl is not on the package registries this project uses)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	rt "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	ep := flag.String("endpoint", "unix://"+os.Getenv("HOME")+"/.cache/tbmq-real-node/containerd/containerd.sock", "CRI endpoint")
	flag.Parse()
	conn, err := grpc.NewClient(*ep, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil { fmt.Fprintln(os.Stderr, err); os.Exit(1) }
	c := rt.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := "pods"
	if flag.NArg() > 0 { cmd = flag.Arg(0) }
	pods, err := c.ListPodSandbox(ctx, &rt.ListPodSandboxRequest{})
	if err != nil { fmt.Fprintln(os.Stderr, err); os.Exit(1) }
	switch cmd {
	case "pods":
		for _, p := range pods.Items { fmt.Printf("%s %s/%s %s\n", p.Id[:13], p.Metadata.Namespace, p.Metadata.Name, p.State) }
	case "ps":
		cs, err := c.ListContainers(ctx, &rt.ListContainersRequest{})
		if err != nil { fmt.Fprintln(os.Stderr, err); os.Exit(1) }
		for _, x := range cs.Containers { fmt.Printf("%s %s %s %s\n", x.Id[:13], x.Metadata.Name, x.State, strings.TrimPrefix(x.Image.Image, "sha256:")[:12]) }
	case "rmp":
		for _, p := range pods.Items {
			if _, err := c.StopPodSandbox(ctx, &rt.StopPodSandboxRequest{PodSandboxId: p.Id}); err != nil { fmt.Fprintln(os.Stderr, "stop", p.Id, err) }
			if _, err := c.RemovePodSandbox(ctx, &rt.RemovePodSandboxRequest{PodSandboxId: p.Id}); err != nil { fmt.Fprintln(os.Stderr, "rm", p.Id, err) }
			fmt.Println("removed", p.Metadata.Namespace+"/"+p.Metadata.Name)
		}
	}
}
