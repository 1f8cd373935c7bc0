internal import NIOCore
