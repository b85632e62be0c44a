import socket,sys,time,threading,selectors,random
mode=sys.argv[1]; subs_mode=sys.argv[2]; nw=int(sys.argv[3])
def conn(m):
    if m=='unix':
        s=socket.socket(socket.AF_UNIX); s.connect('st/rill.sock'); return s,''
    s=socket.socket(); s.connect(('127.0.0.1',18555)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,1); return s,'Authorization: Bearer tok\r\n'
sel=selectors.DefaultSelector()
subs=[]
for i in range(100):
    s,h=conn(subs_mode); lo=(i*997)%950
    q=f'Counter%20where%20value%20%3E%3D%20{lo}%20and%20value%20%3C%20{lo+50}%20sort%20by%20id%20desc%20limit%2020'
    s.sendall(f'GET /v1/subscribe?q={q} HTTP/1.1\r\n{h}\r\n'.encode()); s.setblocking(False); sel.register(s,selectors.EVENT_READ); subs.append(s)
stop=False
def reader():
    while not stop:
        for k,_ in sel.select(0.1):
            try: k.fileobj.recv(1<<16)
            except BlockingIOError: pass
threading.Thread(target=reader,daemon=True).start()
time.sleep(1)
lat=[]
def writer():
    s,h=conn(mode)
    end=time.time()+4
    while time.time()<end:
        i=random.randrange(10000)
        body=f'[{{"op":"update","entity":"Counter","record":{{"id":{i},"value":{random.randrange(1000)}}}}}]'
        t=time.time()
        s.sendall(f'POST /v1/save HTTP/1.1\r\n{h}Content-Length: {len(body)}\r\n\r\n{body}'.encode())
        s.recv(4096); lat.append(time.time()-t)
ts=[threading.Thread(target=writer) for _ in range(nw)]
[t.start() for t in ts]; [t.join() for t in ts]
stop=True
lat.sort(); print(mode,subs_mode,nw,len(lat)/4,'saves/s p50 %.2f ms'%(lat[len(lat)//2]*1000))
for s in subs: s.close()
