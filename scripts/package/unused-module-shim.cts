/**
 * Stand-in for modules a dependency loads but whose features the platform never calls: dockerode's
 * BuildKit session (`@grpc/grpc-js`, `@grpc/proto-loader`, `protobufjs`), used only by its image
 * builds through BuildKit; the platform builds images with podman. They load at dockerode's start, so
 * the stand-in is an empty module rather than one that throws.
 */
export = {};
