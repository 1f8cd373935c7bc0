/// Why a parsed JSON value is not the value expected, and where: the wording of Keyjar's
/// protocol errors ("missing 'headers' at request.setCookies").
///
/// The path is collected while the error travels outwards (each level puts its key in front),
/// so decoding that succeeds never builds one.
///
/// Public (the module is no product, so no user sees it) rather than package, like
/// ``JSONValue`` and its readers: Swift 6.3 specializes an `@inlinable` generic across modules
/// only when it is public. As `package`, `required`, `optionalInteger` and `elements` ran
/// unspecialized in every message's decoding (docs/performance.md, Engine and wire coding).
public struct JSONShapeError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Problem: Sendable, Hashable {
        /// A required member is absent.
        case missing(String)
        /// A value of another JSON type (`null` included, where no value is optional).
        case wrongType
        /// The right type, but not a value the field can hold (an unknown enum name, a number
        /// out of range).
        case invalidValue
    }

    public var problem: Problem
    /// Member names and array positions ("Index 2"), outermost first.
    public var path: [String]

    @inlinable
    public init(_ problem: Problem, path: [String] = []) {
        self.problem = problem
        self.path = path
    }

    public static let wrongType = JSONShapeError(.wrongType)
    public static let invalidValue = JSONShapeError(.invalidValue)

    /// The error as met one level further out, under `key`.
    @inlinable
    public func under(_ key: String) -> JSONShapeError {
        var error = self
        error.path.insert(key, at: 0)
        return error
    }

    public var description: String {
        let place = path.isEmpty ? "top level" : path.joined(separator: ".")
        switch problem {
        case .missing(let key): return "missing '\(key)' at \(place)"
        case .wrongType: return "wrong type at \(place)"
        case .invalidValue: return "invalid value at \(place)"
        }
    }
}

// The one way Keyjar's JSON formats read a parsed value. Objects may carry members a reader
// does not know (a newer peer's), which are ignored; an optional member may be absent or null.
extension JSONValue {
    /// The members of an object.
    @inlinable
    public func members() throws(JSONShapeError) -> [(key: String, value: JSONValue)] {
        guard case .object(let members) = self else { throw .wrongType }
        return members
    }

    /// The member `key` of an object, read by `read`; absent is an error.
    @inlinable
    public func required<Value>(
        _ key: String,
        _ read: (JSONValue) throws(JSONShapeError) -> Value
    ) throws(JSONShapeError) -> Value {
        let value = try member(key)
        do {
            return try read(value)
        } catch {
            throw error.under(key)
        }
    }

    /// The member `key` of an object, read by `read`; nil when absent or null.
    @inlinable
    public func optional<Value>(
        _ key: String,
        _ read: (JSONValue) throws(JSONShapeError) -> Value
    ) throws(JSONShapeError) -> Value? {
        guard let value = try optionalMember(key) else { return nil }
        do {
            return try read(value)
        } catch {
            throw error.under(key)
        }
    }

    /// Each element of an array read by `read`, positions named as "Index N" in errors.
    @inlinable
    public func elements<Element>(
        _ read: (JSONValue) throws(JSONShapeError) -> Element
    ) throws(JSONShapeError) -> [Element] {
        guard case .array(let values) = self else { throw .wrongType }
        var elements: [Element] = []
        elements.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            do {
                elements.append(try read(value))
            } catch {
                throw error.under("Index \(index)")
            }
        }
        return elements
    }

    // MARK: Members of scalar types

    /// The member `key` of an object; absent is an error.
    @inlinable
    public func member(_ key: String) throws(JSONShapeError) -> JSONValue {
        guard let member = try members().first(where: { $0.key == key }) else { throw JSONShapeError(.missing(key)) }
        return member.value
    }

    /// The member `key` of an object; nil when absent or null.
    @inlinable
    public func optionalMember(_ key: String) throws(JSONShapeError) -> JSONValue? {
        guard let member = try members().first(where: { $0.key == key }), !member.value.isNull else { return nil }
        return member.value
    }

    @inlinable
    public func string(_ key: String) throws(JSONShapeError) -> String {
        let value = try member(key)
        do { return try value.decodeString() } catch { throw error.under(key) }
    }

    @inlinable
    public func optionalString(_ key: String) throws(JSONShapeError) -> String? {
        guard let value = try optionalMember(key) else { return nil }
        do { return try value.decodeString() } catch { throw error.under(key) }
    }

    @inlinable
    public func bool(_ key: String) throws(JSONShapeError) -> Bool {
        let value = try member(key)
        do { return try value.decodeBool() } catch { throw error.under(key) }
    }

    @inlinable
    public func double(_ key: String) throws(JSONShapeError) -> Double {
        let value = try member(key)
        do { return try value.decodeDouble() } catch { throw error.under(key) }
    }

    @inlinable
    public func optionalDouble(_ key: String) throws(JSONShapeError) -> Double? {
        guard let value = try optionalMember(key) else { return nil }
        do { return try value.decodeDouble() } catch { throw error.under(key) }
    }

    @inlinable
    public func integer<Integer: FixedWidthInteger>(
        _ key: String,
        as type: Integer.Type = Integer.self
    ) throws(JSONShapeError) -> Integer {
        let value = try member(key)
        do { return try value.decodeInteger(type) } catch { throw error.under(key) }
    }

    @inlinable
    public func optionalInteger<Integer: FixedWidthInteger>(
        _ key: String,
        as type: Integer.Type = Integer.self
    ) throws(JSONShapeError) -> Integer? {
        guard let value = try optionalMember(key) else { return nil }
        do { return try value.decodeInteger(type) } catch { throw error.under(key) }
    }

    @inlinable
    public func uint64(_ key: String) throws(JSONShapeError) -> UInt64 { try integer(key, as: UInt64.self) }

    @inlinable
    public func int(_ key: String) throws(JSONShapeError) -> Int { try integer(key, as: Int.self) }

    /// A member naming one of an enum's cases.
    @inlinable
    public func rawValue<Value: RawRepresentable>(
        _ key: String,
        as type: Value.Type = Value.self
    ) throws(JSONShapeError) -> Value where Value.RawValue == String {
        let value = try member(key)
        do { return try value.decodeRawValue(type) } catch { throw error.under(key) }
    }

    /// An enum case written as an object with one member named after the case, among
    /// `cases`; members named otherwise are ignored. The case's body must be an object.
    public func enumCase(of cases: [String]) throws(JSONShapeError) -> (name: String, body: JSONValue) {
        var found: (name: String, body: JSONValue)?
        for member in try members() where cases.contains(member.key) {
            guard found == nil else { throw .wrongType }
            found = (member.key, member.value)
        }
        guard let found else { throw .wrongType }
        guard case .object = found.body else { throw JSONShapeError.wrongType.under(found.name) }
        return found
    }

    // MARK: Scalars

    @inlinable
    public func decodeString() throws(JSONShapeError) -> String {
        guard case .string(let value) = self else { throw .wrongType }
        return value
    }

    @inlinable
    public func decodeBool() throws(JSONShapeError) -> Bool {
        guard case .bool(let value) = self else { throw .wrongType }
        return value
    }

    /// Any finite number; one too large for a Double (1e400) is invalid.
    @inlinable
    public func decodeDouble() throws(JSONShapeError) -> Double {
        guard case .number = self else { throw .wrongType }
        guard let value = double else { throw .invalidValue }
        return value
    }

    /// An integer of the type's range, written as digits or as a number with an exact integral
    /// value (`5.0`, `1e2`): Foundation's decoder read both, and clients built on it may send them.
    @inlinable
    public func decodeInteger<Integer: FixedWidthInteger>(
        _ type: Integer.Type = Integer.self
    ) throws(JSONShapeError) -> Integer {
        guard case .number(let text) = self else { throw .wrongType }
        if let value = Integer(text) { return value }
        guard let double = Double(text), let value = Integer(exactly: double) else { throw .invalidValue }
        return value
    }

    @inlinable
    public func decodeUInt64() throws(JSONShapeError) -> UInt64 { try decodeInteger(UInt64.self) }

    @inlinable
    public func decodeInt() throws(JSONShapeError) -> Int { try decodeInteger(Int.self) }

    /// A string naming one of an enum's cases.
    @inlinable
    public func decodeRawValue<Value: RawRepresentable>(
        _ type: Value.Type = Value.self
    ) throws(JSONShapeError) -> Value where Value.RawValue == String {
        guard let value = Value(rawValue: try decodeString()) else { throw .invalidValue }
        return value
    }
}
