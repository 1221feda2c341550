; Equality in a precondition needs :equality.
(define (domain bw)
  (:predicates (on ?x ?y) (clear ?x))
  (:action stack
    :parameters (?x ?y)
    :precondition (and (clear ?x) (clear ?y) (= ?x ?y))
    :effect (on ?x ?y)))
