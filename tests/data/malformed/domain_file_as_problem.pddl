; A domain file, given where a problem file is expected.
(define (domain ferry)
  (:predicates (at-ferry ?l) (location ?l))
  (:action sail
    :parameters (?from ?to)
    :precondition (and (location ?from) (location ?to) (at-ferry ?from))
    :effect (and (at-ferry ?to) (not (at-ferry ?from)))))
