// Lists the services a node's client listener names through gRPC server reflection.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as path from 'node:path';
import { testCredentials } from './harness';

const reflectionProto = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto/grpc/reflection/v1/reflection.proto');

type ReflectionClient = {
  ServerReflectionInfo(): grpc.ClientDuplexStream<object, { list_services_response?: { service: Array<{ name: string }> } }>;
  close(): void;
};

export async function listServices(address: string, channelOptions: grpc.ChannelOptions = {}): Promise<string[]> {
  const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(reflectionProto, { keepCase: true, defaults: true })) as unknown as {
    grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } };
  };
  const client = new loaded.grpc.reflection.v1.ServerReflection(address, testCredentials(), channelOptions) as unknown as ReflectionClient;
  try {
    const stream = client.ServerReflectionInfo();
    return await new Promise<string[]>((resolve, reject) => {
      stream.on('data', (res) => {
        resolve((res.list_services_response?.service ?? []).map((s: { name: string }) => s.name));
        stream.end();
      });
      stream.on('error', reject);
      stream.write({ list_services: '' });
    });
  } finally {
    client.close();
  }
}
