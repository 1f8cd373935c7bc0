// The floor for any request/reply over a Unix socket on this machine: a socketpair ping-pong
// of 300-byte messages between two processes, 20,000 round trips.
// Run: gcc -O2 scripts/socket-roundtrip-floor.c -o /tmp/floor && /tmp/floor
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
static double now(){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1e9+t.tv_nsec;}
int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b; return x<y?-1:x>y;}
int main(){int sv[2]; socketpair(AF_UNIX,SOCK_STREAM,0,sv); char buf[512];
 if(fork()==0){ while(read(sv[1],buf,300)>0) write(sv[1],buf,300); return 0;}
 static double s[20000]; for(int i=0;i<20000;i++){double t=now(); write(sv[0],buf,300); int n=0; while(n<300) n+=read(sv[0],buf+n,300-n); s[i]=now()-t;}
 qsort(s,20000,sizeof(double),cmp); printf("unix socket RTT median %.1f us p99 %.1f us\n", s[10000]/1e3, s[19800]/1e3); return 0;}
