; The action uses 'table', which is not a declared constant.
(define (domain bw)
  (:predicates (on ?x ?y) (clear ?x))
  (:action drop
    :parameters (?x)
    :precondition (clear ?x)
    :effect (on ?x table)))
